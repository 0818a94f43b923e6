#include "compare/compared_params.hpp"

#include "params/experiment_file.hpp"
#include "params/framework_params.hpp"

namespace genrepro {

OrderedJson compared_params(const RunParams& p) {
  // The framework first: a change of it is the one to read first in a list of changes.
  OrderedJson j = {{"framework", to_string(p.sampling.framework)}};
  const OrderedJson written = params_to_json(p);
  for (auto it = written.begin(); it != written.end(); ++it)
    if (!is_framework_key(it.key()) && it.key() != "control_texts" && it.key() != "replica" && it.key() != "engine")
      j[it.key()] = it.value();
  // Written only for copies 1..N-1 (params_to_json), compared for every run: copy 0 holds 0.
  j["replica"] = p.replica;
  // Every control in one order for every run (as written where the framework has it: the same value).
  for (const ParamRow* k : control_keys()) j[k->key] = k->get(p);
  // Which list entries were given as text ([] when none): where ids came from, not arithmetic, so
  // no group of run_diff's names it and a text that encodes to the same ids changes no output.
  j["control_texts"] = written.contains("control_texts") ? written["control_texts"] : OrderedJson::array();
  // Written only for another engine than genrepro's, compared for every run.
  j["engine"] = to_string(p.engine);
  return j;
}

std::vector<std::string> compared_param_keys() {
  std::vector<std::string> keys;
  const OrderedJson j = compared_params(RunParams{});
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

bool is_framework_key(const std::string& key) { return key == "framework" || find_control_key(key) != nullptr; }

bool explains(const std::string& key, unsigned diff_groups) {
  const ParamRow* row = find_param(key);
  return row && (row->diff_groups & diff_groups) != 0;
}

}  // namespace genrepro
