// simdjson's two stages timed apart, on one whole JSON document (benches/README, session 19).
//
// Not part of any build: compile it by hand against the simdjson amalgamation that the
// `simdjson-sys` crate vendors (the same simdjson 4.6 that `peer_decode` links), e.g.
//
//   SJ=$(ls -d ~/.cargo/registry/src/*/simdjson-sys-*/vendor/simdjson | head -1)
//   g++ -O3 -std=c++17 -I"$SJ" simdjson_stages.cpp "$SJ/simdjson.cpp" -o /tmp/simdjson_stages
//   taskset -c 1 /tmp/simdjson_stages ../../../shared/conformance/json/bench/twitter.json 3000
//
// Prints the kernel simdjson chose, then the best and mean wall time of stage 1 alone
// (structural indexing, UTF-8 validation) and of a whole DOM parse (both stages), over REPS
// runs of each on the same padded bytes, and the number of structural indexes.
#include "simdjson.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace simdjson;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: simdjson_stages FILE.json REPS\n");
    return 2;
  }
  padded_string json = padded_string::load(argv[1]);
  const int reps = std::atoi(argv[2]);
  const implementation *impl = get_active_implementation();
  std::printf("kernel %s\n", impl->name().c_str());
  std::unique_ptr<internal::dom_parser_implementation> stages;
  if (impl->create_dom_parser_implementation(json.size(), DEFAULT_MAX_DEPTH, stages)) {
    std::fprintf(stderr, "no parser implementation\n");
    return 1;
  }
  dom::parser parser;
  using us = std::chrono::duration<double, std::micro>;
  double best1 = 1e18, bestall = 1e18, sum1 = 0, sumall = 0;
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    auto err = stages->stage1(reinterpret_cast<const uint8_t *>(json.data()), json.size(),
                              stage1_mode::regular);
    auto t1 = std::chrono::steady_clock::now();
    if (err) {
      std::fprintf(stderr, "stage 1 rejected the document\n");
      return 1;
    }
    dom::element doc;
    auto t2 = std::chrono::steady_clock::now();
    auto err2 = parser.parse(json).get(doc);
    auto t3 = std::chrono::steady_clock::now();
    if (err2) {
      std::fprintf(stderr, "the parse rejected the document\n");
      return 1;
    }
    double one = us(t1 - t0).count(), all = us(t3 - t2).count();
    sum1 += one;
    sumall += all;
    best1 = std::min(best1, one);
    bestall = std::min(bestall, all);
  }
  std::printf("stage 1 best %.1f mean %.1f us; full parse best %.1f mean %.1f us; %u structurals\n",
              best1, sum1 / reps, bestall, sumall / reps, stages->n_structural_indexes);
  return 0;
}
