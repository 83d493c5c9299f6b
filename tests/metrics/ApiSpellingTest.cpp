// judge, compare_pair and compare_item take an API in any of the spellings the rest of the API uses (a
// registry key "Torch.matmul", a dump key "Torch.matmul.0.forward") and the list name ("matmul"), and
// resolve them identically. The expected standards come from msprobe's API lists (precheck.md §2: matmul and
// linear in the ULP standard's list).
#include <gtest/gtest.h>

#include <vector>

#include "probe/judge.h"
#include "probe/output_compare.h"
#include "probe/pair_metrics.h"

namespace probe {
namespace {

const Standards& cfg() {
  static const Standards s = Standards::builtin(Profile::MsProbe);
  return s;
}

// One float32 rounding away from the bench: close enough for every rule, far enough to give metrics.
Tensor bench() { return Tensor::from_values<double>(std::vector<double>{1.0, 2.0, 3.0, 0.1}, Shape{4}); }
Tensor device() {
  return Tensor::from_values<double>(std::vector<double>{1.0, 2.0, 3.0000002, 0.1}, Shape{4})
      .to(DType::Float32);
}

TEST(ApiSpelling, JudgeResolvesEverySpellingToTheListName) {
  JudgeOptions o;
  o.rule = JudgeRule::PrecisionStandard;
  const Verdict list = judge("matmul", bench(), device(), cfg(), DType::Float32, o);
  ASSERT_EQ(list.standard, Standard::Ulp);
  for (const char* spelling : {"Torch.matmul", "Torch.matmul.0", "Torch.matmul.3.forward"}) {
    SCOPED_TRACE(spelling);
    const Verdict v = judge(spelling, bench(), device(), cfg(), DType::Float32, o);
    EXPECT_EQ(v.standard, Standard::Ulp);
    EXPECT_EQ(v.status, list.status);
    EXPECT_EQ(v.method, list.method);
    EXPECT_EQ(v.message, list.message);
  }
  o.rule = JudgeRule::RunUt;
  const Verdict old_rule = judge("Functional.linear", bench(), device(), cfg(), DType::Float32, o);
  const Verdict old_rule_list = judge("linear", bench(), device(), cfg(), DType::Float32, o);
  EXPECT_EQ(old_rule.status, old_rule_list.status);
  EXPECT_EQ(old_rule.message, old_rule_list.message);
}

TEST(ApiSpelling, ComparePairAndCompareItemResolveEverySpelling) {
  const PairMetrics list = compare_pair("linear", bench(), device(), cfg());
  ASSERT_EQ(list.standard, Standard::Ulp);
  for (const char* spelling : {"Functional.linear", "Functional.linear.2.forward"}) {
    SCOPED_TRACE(spelling);
    const PairMetrics p = compare_pair(spelling, bench(), device(), cfg());
    EXPECT_EQ(p.standard, Standard::Ulp);
    EXPECT_EQ(p.row.status, list.row.status);
    EXPECT_EQ(p.row.message, list.row.message);
    const DetailRow item = compare_item(spelling, Value(bench()), Value(device()), cfg());
    EXPECT_EQ(item.status, list.row.status);
    EXPECT_EQ(item.message, list.row.message);
  }
}

}  // namespace
}  // namespace probe
