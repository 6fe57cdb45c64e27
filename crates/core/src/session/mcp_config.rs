//! The user's MCP server configuration (PROFILE §18 "Configuration", "Secrets", "Limits"):
//! `{"mcpServers":{NAME:CONFIG}}` from `--mcp-config` (JSON text or a file's text) and
//! initialize `mcpServers`, typed into [`ServerDef`]s: the in-process SDK servers of §16 and
//! the user's stdio, http and sse servers, each checked (NAME's pattern, the shape of CONFIG,
//! a plain `http://` URL only for loopback), merged in configuration order (a later definition
//! of a name replaces the earlier one in its place) and counted (at most 64).
//!
//! Must never: do I/O; quote more than 64 bytes of a host-given name in an error; show a secret
//! (`env` values and header values are never in `Debug`, errors or [`UserServer::status_config`]).

use agentx_wire::json::{self, Value};

use super::mcp::quoted;

/// At most this many servers (PROFILE §18 "Limits").
pub const MAX_SERVERS: usize = 64;
/// A `timeout` under this many milliseconds is ignored (PROFILE §18).
pub const MIN_TIMEOUT_MS: u64 = 1_000;
/// Secrets are values of at least this many bytes (PROFILE §18 "Secrets").
pub const MIN_SECRET_LEN: usize = 8;

/// How a user's server is reached.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The config's `env`, in order.
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// The config's headers, in order.
        headers: Vec<(String, String)>,
    },
    /// The older HTTP+SSE transport.
    Sse {
        /// The SSE endpoint.
        url: String,
        /// The config's headers, in order.
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for Transport {
    /// Names and commands only: `env` and header values may be secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names =
            |v: &Vec<(String, String)>| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        match self {
            Transport::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env_names", &names(env))
                .finish(),
            Transport::Http { url, headers } | Transport::Sse { url, headers } => f
                .debug_struct(self.kind())
                .field("url", &strip_query(url))
                .field("header_names", &names(headers))
                .finish(),
        }
    }
}

impl Transport {
    /// `stdio`, `http` or `sse`.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Sse { .. } => "sse",
        }
    }
}

/// Whether a variable's or header's name makes its value a secret.
type SecretName = fn(&str) -> bool;

/// One of the user's servers (stdio, http, sse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserServer {
    /// How it is reached.
    pub transport: Transport,
    /// The config's `timeout` for a call, in ms (`None` when absent or under 1,000 ms).
    pub timeout_ms: Option<u64>,
    /// `tools[].permission_policy` entries: the tool's own name and the policy.
    pub tool_policies: Vec<(String, String)>,
}

impl UserServer {
    /// The values PROFILE §18 calls secret: a secret-named `env` variable's or header's value
    /// of at least 8 bytes.
    pub fn secrets(&self) -> Vec<String> {
        let (pairs, is_secret): (&[(String, String)], SecretName) = match &self.transport {
            Transport::Stdio { env, .. } => (env, secret_env_name),
            Transport::Http { headers, .. } | Transport::Sse { headers, .. } => {
                (headers, secret_header_name)
            }
        };
        pairs
            .iter()
            .filter(|(k, v)| is_secret(k) && v.len() >= MIN_SECRET_LEN)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// `mcp_status`'s `config`: `{"type":"stdio","command","args"}` or
    /// `{"type":"http"|"sse","url"}` with the URL's query string removed; never `env` or
    /// `headers` (PROFILE §18).
    pub fn status_config(&self) -> String {
        let mut m = Vec::with_capacity(96);
        m.extend_from_slice(b"{\"type\":");
        json::write_str(&mut m, self.transport.kind());
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                m.extend_from_slice(b",\"command\":");
                json::write_str(&mut m, command);
                m.extend_from_slice(b",\"args\":[");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        m.push(b',');
                    }
                    json::write_str(&mut m, a);
                }
                m.push(b']');
            }
            Transport::Http { url, .. } | Transport::Sse { url, .. } => {
                m.extend_from_slice(b",\"url\":");
                json::write_str(&mut m, strip_query(url));
            }
        }
        m.push(b'}');
        String::from_utf8(m).unwrap_or_default()
    }
}

/// A header value is secret when the header is `Authorization`, `Proxy-Authorization` or
/// `Cookie`, or its name contains (any case) `key`, `token`, `secret` or `auth`.
pub fn secret_header_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "cookie"
        || ["key", "token", "secret", "auth"]
            .iter()
            .any(|w| n.contains(w))
}

/// An `env` value is secret when the variable's name contains (any case) one of these words.
pub fn secret_env_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// What a server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// The host's in-process server (§16).
    Sdk,
    /// The user's own server (§18).
    User(UserServer),
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerDef {
    /// Its name (`[A-Za-z0-9_-]{1,64}`).
    pub name: String,
    /// What it is.
    pub kind: ServerKind,
}

/// Why a configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not `{"mcpServers":{…}}`.
    Shape(&'static str),
    /// One server's definition (its name JSON-quoted, at most 64 bytes of it).
    Server {
        /// The server's name, quoted.
        server: String,
        /// What is wrong.
        why: String,
    },
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Shape(why) => f.write_str(why),
            ConfigError::Server { server, why } => write!(f, "MCP server {server}: {why}"),
        }
    }
}

fn server_error(name: &str, why: impl Into<String>) -> ConfigError {
    ConfigError::Server {
        server: quoted(name),
        why: why.into(),
    }
}

/// True when `name` matches `[A-Za-z0-9_-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The servers of a configuration document `{"mcpServers":{NAME:CONFIG}}`, in order.
pub fn servers_of_config(text: &str) -> Result<Vec<ServerDef>, ConfigError> {
    let doc = json::parse(text.as_bytes())
        .map_err(|_| ConfigError::Shape("it is not JSON {\"mcpServers\":{…}}"))?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or(ConfigError::Shape("it is not a JSON object"))?;
    let mut servers = None;
    for (name, value) in obj.iter() {
        if name.decode() == "mcpServers" {
            servers = Some(value);
        } else {
            return Err(ConfigError::Shape("only the member mcpServers is read"));
        }
    }
    match servers {
        Some(v) => servers_of_map(v),
        None => Err(ConfigError::Shape("it has no mcpServers member")),
    }
}

/// The servers of an `mcpServers` map, in order (a name given twice: the later definition
/// in the earlier place).
pub fn servers_of_map(map: Value<'_, '_>) -> Result<Vec<ServerDef>, ConfigError> {
    let obj = map
        .as_object()
        .ok_or(ConfigError::Shape("mcpServers is not an object"))?;
    let mut out = Vec::new();
    for (name, config) in obj.iter() {
        let name = name.decode().into_owned();
        let def = server_of(&name, config)?;
        merge(&mut out, vec![def])?;
    }
    Ok(out)
}

/// Adds `more` to `into` in order: a name already there is replaced in its place. More than
/// [`MAX_SERVERS`] names is an error naming the first one past the limit.
pub fn merge(into: &mut Vec<ServerDef>, more: Vec<ServerDef>) -> Result<(), ConfigError> {
    for def in more {
        match into.iter().position(|d| d.name == def.name) {
            Some(i) => into[i] = def,
            None if into.len() == MAX_SERVERS => {
                return Err(server_error(
                    &def.name,
                    format!("more than {MAX_SERVERS} MCP servers"),
                ))
            }
            None => into.push(def),
        }
    }
    Ok(())
}

fn string_of(v: Value<'_, '_>) -> Option<String> {
    v.as_str().map(|s| s.decode().into_owned())
}

fn string_map(v: Value<'_, '_>) -> Option<Vec<(String, String)>> {
    let o = v.as_object()?;
    let mut out = Vec::new();
    for (k, v) in o.iter() {
        out.push((k.decode().into_owned(), string_of(v)?));
    }
    Some(out)
}

/// One server's definition `NAME: CONFIG`, checked.
pub fn server_of(name: &str, config: Value<'_, '_>) -> Result<ServerDef, ConfigError> {
    if !valid_name(name) {
        return Err(server_error(
            name,
            "the name does not match [A-Za-z0-9_-]{1,64}",
        ));
    }
    let obj = config
        .as_object()
        .ok_or_else(|| server_error(name, "its configuration is not an object"))?;
    let kind = match obj.get("type") {
        None => "stdio".to_string(),
        Some(t) => string_of(t).ok_or_else(|| server_error(name, "type is not a string"))?,
    };
    let str_member = |key: &str| -> Result<Option<String>, ConfigError> {
        match obj.get(key) {
            None => Ok(None),
            Some(v) => string_of(v)
                .map(Some)
                .ok_or_else(|| server_error(name, format!("{key} is not a string"))),
        }
    };
    let pairs = |key: &str| -> Result<Vec<(String, String)>, ConfigError> {
        match obj.get(key) {
            None => Ok(Vec::new()),
            Some(v) => string_map(v)
                .ok_or_else(|| server_error(name, format!("{key} is not an object of strings"))),
        }
    };
    let allowed: &[&str] = match kind.as_str() {
        "sdk" => {
            return Ok(ServerDef {
                name: name.to_string(),
                kind: ServerKind::Sdk,
            })
        }
        "stdio" => &[
            "type",
            "command",
            "args",
            "env",
            "timeout",
            "alwaysLoad",
            "tools",
        ],
        "http" | "sse" => &["type", "url", "headers", "timeout", "alwaysLoad", "tools"],
        _ => {
            return Err(server_error(
                name,
                format!("type {} is not stdio, http, sse or sdk", quoted(&kind)),
            ))
        }
    };
    for (k, _) in obj.iter() {
        let k = k.decode();
        if !allowed.contains(&&*k) {
            return Err(server_error(name, format!("unknown member {}", quoted(&k))));
        }
    }
    let transport = if kind == "stdio" {
        let command = str_member("command")?
            .filter(|c| !c.is_empty())
            .ok_or_else(|| server_error(name, "it has no command"))?;
        let args = match obj.get("args") {
            None => Vec::new(),
            Some(v) => v
                .as_array()
                .and_then(|a| a.iter().map(string_of).collect::<Option<Vec<_>>>())
                .ok_or_else(|| server_error(name, "args is not an array of strings"))?,
        };
        Transport::Stdio {
            command,
            args,
            env: pairs("env")?,
        }
    } else {
        let url = str_member("url")?.ok_or_else(|| server_error(name, "it has no url"))?;
        check_url(&url).map_err(|why| server_error(name, why))?;
        let headers = pairs("headers")?;
        if kind == "http" {
            Transport::Http { url, headers }
        } else {
            Transport::Sse { url, headers }
        }
    };
    let timeout_ms = match obj.get("timeout") {
        None => None,
        Some(v) => {
            let ms = v
                .as_number()
                .and_then(|n| n.as_u64())
                .ok_or_else(|| server_error(name, "timeout is not a whole number of ms"))?;
            (ms >= MIN_TIMEOUT_MS).then_some(ms)
        }
    };
    if let Some(v) = obj.get("alwaysLoad") {
        if v.as_bool().is_none() {
            return Err(server_error(name, "alwaysLoad is not a boolean"));
        }
    }
    let mut tool_policies = Vec::new();
    if let Some(v) = obj.get("tools") {
        let bad = || server_error(name, "tools is not a list of {name, permission_policy}");
        for t in v.as_array().ok_or_else(bad)?.iter() {
            let t = t.as_object().ok_or_else(bad)?;
            let tool = t.get("name").and_then(string_of).ok_or_else(bad)?;
            let policy = t
                .get("permission_policy")
                .and_then(string_of)
                .filter(|p| ["always_allow", "always_ask", "always_deny"].contains(&p.as_str()))
                .ok_or_else(bad)?;
            tool_policies.push((tool, policy));
        }
    }
    Ok(ServerDef {
        name: name.to_string(),
        kind: ServerKind::User(UserServer {
            transport,
            timeout_ms,
            tool_policies,
        }),
    })
}

/// `url` without its query string (and fragment).
pub fn strip_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// An `https://` URL, or a plain `http://` one whose host is loopback (PROFILE §18, §14).
pub fn check_url(url: &str) -> Result<(), &'static str> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("url is not an http:// or https:// URL")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host_port.is_empty() {
        return Err("url has no host");
    }
    match scheme.as_str() {
        "https" => Ok(()),
        "http" if is_loopback(host_port) => Ok(()),
        "http" => Err("a plain http:// url must be loopback (use https://)"),
        _ => Err("url is not an http:// or https:// URL"),
    }
}

fn is_loopback(host_port: &str) -> bool {
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host_port.rsplit_once(':').map_or(host_port, |(h, _)| h)
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<core::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        servers_of_config(text).unwrap_err().to_string()
    }

    #[test]
    fn each_type_is_read_in_order() {
        let defs = servers_of_config(
            r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"},"fs":{"command":"srv","args":["-v"],"env":{"API_KEY":"0123456789"},"timeout":5000},"w":{"type":"http","url":"https://h/mcp?k=v","headers":{"Authorization":"Bearer abcdefgh"}},"s":{"type":"sse","url":"http://127.0.0.1:9/sse","timeout":999}}}"#,
        )
        .unwrap();
        let names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["calc", "fs", "w", "s"]);
        assert_eq!(defs[0].kind, ServerKind::Sdk);
        let ServerKind::User(fs) = &defs[1].kind else {
            panic!()
        };
        assert_eq!(fs.timeout_ms, Some(5000));
        assert_eq!(fs.secrets(), ["0123456789"]);
        assert_eq!(
            fs.status_config(),
            r#"{"type":"stdio","command":"srv","args":["-v"]}"#
        );
        assert!(!format!("{fs:?}").contains("0123456789"));
        let ServerKind::User(w) = &defs[2].kind else {
            panic!()
        };
        assert_eq!(
            w.status_config(),
            r#"{"type":"http","url":"https://h/mcp"}"#
        );
        assert_eq!(w.secrets(), ["Bearer abcdefgh"]);
        assert!(!format!("{w:?}").contains("abcdefgh"));
        let ServerKind::User(s) = &defs[3].kind else {
            panic!()
        };
        assert_eq!(s.timeout_ms, None, "under 1,000 ms is ignored");
    }

    #[test]
    fn secrets_follow_the_names_and_the_length() {
        for (name, secret) in [
            ("GITHUB_TOKEN", true),
            ("db_password", true),
            ("MY_PASSWD", true),
            ("Auth_X", true),
            ("CREDENTIALS", true),
            ("COOKIE_JAR", true),
            ("HOME", false),
            ("PATH", false),
        ] {
            assert_eq!(secret_env_name(name), secret, "{name}");
        }
        for (name, secret) in [
            ("Authorization", true),
            ("Proxy-Authorization", true),
            ("Cookie", true),
            ("X-Api-Key", true),
            ("x-session-token", true),
            ("Accept", false),
        ] {
            assert_eq!(secret_header_name(name), secret, "{name}");
        }
        let short = UserServer {
            transport: Transport::Stdio {
                command: "x".into(),
                args: vec![],
                env: vec![("API_KEY".into(), "1234567".into())],
            },
            timeout_ms: None,
            tool_policies: vec![],
        };
        assert!(short.secrets().is_empty(), "7 bytes are not a secret");
    }

    #[test]
    fn names_follow_the_pattern_at_its_edges() {
        let ok = "n".repeat(64);
        assert!(
            servers_of_config(&format!(r#"{{"mcpServers":{{"{ok}":{{"command":"x"}}}}}}"#)).is_ok()
        );
        let long = "n".repeat(65);
        let e = err(&format!(
            r#"{{"mcpServers":{{"{long}":{{"command":"x"}}}}}}"#
        ));
        assert_eq!(
            e,
            format!(
                "MCP server \"{}\": the name does not match [A-Za-z0-9_-]{{1,64}}",
                "n".repeat(64)
            )
        );
        for bad in ["", "a.b", "a b", "é"] {
            let e = err(&format!(
                r#"{{"mcpServers":{{"{bad}":{{"command":"x"}}}}}}"#
            ));
            assert!(e.contains("does not match"), "{bad}: {e}");
        }
    }

    #[test]
    fn sixty_four_servers_and_no_more() {
        let many = |n: usize| {
            let members: Vec<String> = (0..n)
                .map(|i| format!(r#""s{i}":{{"command":"x"}}"#))
                .collect();
            format!(r#"{{"mcpServers":{{{}}}}}"#, members.join(","))
        };
        assert_eq!(servers_of_config(&many(64)).unwrap().len(), 64);
        assert_eq!(
            err(&many(65)),
            "MCP server \"s64\": more than 64 MCP servers"
        );
        // A later definition replaces the earlier one in its place, and does not count twice.
        let mut all = servers_of_config(&many(64)).unwrap();
        let again = servers_of_config(r#"{"mcpServers":{"s3":{"command":"y"}}}"#).unwrap();
        merge(&mut all, again).unwrap();
        assert_eq!(all.len(), 64);
        assert_eq!(all[3].name, "s3");
        assert!(
            matches!(&all[3].kind, ServerKind::User(u) if matches!(&u.transport, Transport::Stdio { command, .. } if command == "y"))
        );
    }

    #[test]
    fn urls_must_be_https_or_loopback() {
        for ok in [
            "https://example.com/mcp",
            "http://127.0.0.1:8000/mcp",
            "http://localhost/mcp",
            "http://[::1]:9/x",
            "http://127.1.2.3/",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://example.com/mcp",
            "http://10.0.0.1/",
            "ftp://h/",
            "h/mcp",
            "http:///x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            err(r#"{"mcpServers":{"w":{"type":"http","url":"http://example.com/mcp"}}}"#),
            "MCP server \"w\": a plain http:// url must be loopback (use https://)"
        );
    }

    #[test]
    fn malformed_configs_name_the_server() {
        for (config, want) in [
            (r#"{"x":{}}"#, "MCP server \"x\": it has no command"),
            (
                r#"{"x":{"command":1}}"#,
                "MCP server \"x\": command is not a string",
            ),
            (
                r#"{"x":{"command":"c","args":[1]}}"#,
                "MCP server \"x\": args is not an array of strings",
            ),
            (
                r#"{"x":{"command":"c","env":{"A":1}}}"#,
                "MCP server \"x\": env is not an object of strings",
            ),
            (
                r#"{"x":{"type":"ws","url":"u"}}"#,
                "MCP server \"x\": type \"ws\" is not stdio, http, sse or sdk",
            ),
            (
                r#"{"x":{"type":"http"}}"#,
                "MCP server \"x\": it has no url",
            ),
            (
                r#"{"x":{"command":"c","cwd":"/"}}"#,
                "MCP server \"x\": unknown member \"cwd\"",
            ),
            (
                r#"{"x":{"command":"c","timeout":-1}}"#,
                "MCP server \"x\": timeout is not a whole number of ms",
            ),
            (
                r#"{"x":[]}"#,
                "MCP server \"x\": its configuration is not an object",
            ),
        ] {
            assert_eq!(
                err(&format!(r#"{{"mcpServers":{config}}}"#)),
                want,
                "{config}"
            );
        }
        for bad in [
            "/etc/mcp.json",
            "[]",
            r#"{"servers":{}}"#,
            r#"{"mcpServers":[]}"#,
        ] {
            assert!(
                matches!(servers_of_config(bad), Err(ConfigError::Shape(_))),
                "{bad}"
            );
        }
    }
}
