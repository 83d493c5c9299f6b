#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/error.h"

namespace probe {
namespace {

TEST(Csv, MinimalQuotingLikePythonCsv) {
  EXPECT_EQ(csv_encode_row({"a", "(12,)", "x\"y", "line1\nline2", " "}),
            "a,\"(12,)\",\"x\"\"y\",\"line1\nline2\", ");
}

TEST(Csv, WriterAddsBomAndHeaderOnceAndUsesCrlf) {
  const testing::ScratchDir dir("probe-csv");
  const std::string path = dir.file("test.csv");
  {
    CsvWriter w(path, {"A", "B"});
    w.write_row({"1", "2,3"});
  }
  {
    CsvWriter w(path, {"A", "B"});
    w.write_row({"4", "5"});
  }
  EXPECT_EQ(testing::slurp(path),
            "\xEF\xBB\xBF"
            "A,B\r\n1,\"2,3\"\r\n4,5\r\n");
  auto rows = csv_read_file(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1], "2,3");
}

TEST(Csv, ParseEmbeddedNewlinesAndErrors) {
  auto rows = csv_parse("a,\"x\ny\",\r\nb,c,d");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].size(), 3u);
  EXPECT_EQ(rows[0][1], "x\ny");
  EXPECT_EQ(rows[0][2], "");
  EXPECT_EQ(rows[1][2], "d");
  EXPECT_THROW(csv_parse("a,\"open", "f.csv"), Error);
}

// fsync on a device without synchronisation fails with EINVAL (fsync(2)); a full disk fails the same
// path with ENOSPC/EIO. Either way the caller must hear about it.
TEST(Csv, SyncReportsAnFsyncFailureNamingTheFile) {
  CsvWriter w("/dev/null", {"a", "b"});
  try {
    w.sync();
    ADD_FAILURE() << "sync on /dev/null reported success";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.file(), "/dev/null");
    EXPECT_NE(e.message().find("fsync failed"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace probe
