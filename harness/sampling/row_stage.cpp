#include "sampling/row_stage.hpp"

#include <stdexcept>
#include <string>

namespace genrepro::sampling {

void RowStage::apply(Candidates& cur, const StageContext& context) {
  scores_.resize(cur.size);
  for (size_t i = 0; i < cur.size; ++i) {
    if (cur.data[i].id != static_cast<int32_t>(i))
      throw std::logic_error("stage " + name() + " needs the whole vocabulary in id order");  // a bug: see the header
    scores_[i] = cur.data[i].logit;
  }
  rule_(scores_, context);
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].logit = scores_[i];
}

}  // namespace genrepro::sampling
