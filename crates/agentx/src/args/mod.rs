//! The `agentx` command line: the typed grammar of every mode ([`agentx_args`]) and the
//! options the Claude Agent SDKs add with `--verbose` ([`sdk_args`], PROFILE §15).

pub mod agentx_args;
pub mod sdk_args;
