#include "support/FileOps.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "probe/error.h"

namespace probe::detail {

std::string read_whole_file(const std::string& path, const std::string& cannot_open, bool with_reason) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::Io, with_reason ? cannot_open + ": " + std::strerror(errno) : cannot_open, path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

LockedFile::~LockedFile() {
  if (fd_ >= 0) ::close(fd_);
}

LockedFile::LockedFile(LockedFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

LockedFile& LockedFile::operator=(LockedFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

namespace {

void lock_or_throw(int fd, const std::string& path) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return;
  const int err = errno;
  ::close(fd);
  if (err == EWOULDBLOCK)
    throw Error(ErrorKind::Io, "another probe run is writing this file; wait for it to finish", path);
  throw Error(ErrorKind::Io, std::string("cannot lock: ") + std::strerror(err), path);
}

}  // namespace

LockedFile LockedFile::create_new(const std::string& path) {
  LockedFile f;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0) {
    if (errno == EEXIST) return f;
    throw Error(ErrorKind::Io, std::string("cannot create: ") + std::strerror(errno), path);
  }
  lock_or_throw(fd, path);
  f.fd_ = fd;
  return f;
}

LockedFile LockedFile::open_existing(const std::string& path) {
  LockedFile f;
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Io, std::string("cannot open: ") + std::strerror(errno), path);
  lock_or_throw(fd, path);
  f.fd_ = fd;
  return f;
}

void LockedFile::truncate(std::size_t size, const std::string& path_for_errors) const {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    throw Error(ErrorKind::Io, std::string("cannot truncate: ") + std::strerror(errno), path_for_errors);
}

void publish_new_file(const std::string& temp_path, const std::string& final_path) {
  const int rc = ::link(temp_path.c_str(), final_path.c_str());
  const int err = errno;
  ::unlink(temp_path.c_str());
  if (rc == 0) return;
  if (err == EEXIST)
    throw Error(ErrorKind::InvalidArgument,
                "output file exists (an earlier run or another run in the same second); refusing to "
                "overwrite it: pass another --timestamp or -o",
                final_path);
  throw Error(ErrorKind::Io, std::string("cannot move the finished file into place: ") + std::strerror(err),
              final_path);
}

void require_exists(const std::string& path, const std::string& missing, const std::string& field) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(ErrorKind::Io, "cannot access: " + ec.message(), path, field);
  if (!std::filesystem::exists(status)) throw Error(ErrorKind::Io, missing, path, field);
}

}  // namespace probe::detail
