#include "online/SharedDir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "probe/error.h"

namespace probe::online::detail {
namespace {

std::optional<std::uint64_t> number(std::string_view s) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool api_ok(std::string_view api) {
  return !api.empty() && api.size() <= 200 && api[0] != '.' &&
         std::all_of(api.begin(), api.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '.' || c == '-';
         });
}

void write_all(int fd, std::span<const std::byte> bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorKind::Io, std::string("cannot write: ") + std::strerror(errno), path);
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::optional<SharedDirName> parse_shared_dir_name(std::string_view name) {
  SharedDirName n;
  for (auto [prefix, kind] : {std::pair{std::string_view("start_"), SharedDirName::Kind::Start},
                              std::pair{std::string_view("end_"), SharedDirName::Kind::End}}) {
    if (name.starts_with(prefix)) {
      auto rank = number(name.substr(prefix.size()));
      if (!rank) return std::nullopt;
      n.kind = kind;
      n.rank = *rank;
      return n;
    }
  }
  if (!name.ends_with(".rec")) return std::nullopt;
  name.remove_suffix(4);
  std::uint64_t* fields[] = {&n.rank, &n.step, &n.seq};
  for (auto* f : fields) {
    const auto us = name.find('_');
    if (us == std::string_view::npos) return std::nullopt;
    auto v = number(name.substr(0, us));
    if (!v) return std::nullopt;
    *f = *v;
    name.remove_prefix(us + 1);
  }
  if (!api_ok(name)) return std::nullopt;
  n.api = std::string(name);
  return n;
}

SharedDirWriter::SharedDirWriter(std::string dir) : dir_(std::move(dir)) {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(ErrorKind::Io, "the shared directory does not exist or is not a directory", dir_, "nfs_path");
  if (::access(dir_.c_str(), W_OK) != 0)
    throw Error(ErrorKind::Io, "the shared directory is not writable", dir_, "nfs_path");
}

void SharedDirWriter::publish(const std::string& name, std::span<const std::byte> bytes) {
  const std::string tmp =
      dir_ + "/." + name + "." + std::to_string(::getpid()) + "." + std::to_string(temp_counter_++) + ".tmp";
  const std::string final_path = dir_ + "/" + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) throw Error(ErrorKind::Io, std::string("cannot create: ") + std::strerror(errno), tmp);
  try {
    write_all(fd, bytes, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  // link() fails on an existing name, so nothing of another rank, step or run is ever replaced.
  const int rc = ::link(tmp.c_str(), final_path.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (rc == 0) return;
  if (err == EEXIST)
    throw Error(ErrorKind::InvalidArgument,
                "a file of this name is already in the shared directory (not yet taken by the server, or "
                "another run); refusing to replace it",
                final_path);
  throw Error(ErrorKind::Io, std::string("cannot publish: ") + std::strerror(err), final_path);
}

void SharedDirWriter::record(std::uint64_t rank, std::uint64_t step, std::uint64_t seq, std::string_view api,
                             std::span<const std::byte> frame) {
  if (!api_ok(api))
    throw Error(ErrorKind::InvalidArgument,
                "an API name in a shared-directory file name must be [A-Za-z0-9_.-]+", dir_, "api",
                std::string(api));
  if (std::find(started_.begin(), started_.end(), rank) == started_.end()) {
    publish("start_" + std::to_string(rank), {});
    markers_.push_back(dir_ + "/start_" + std::to_string(rank));
    started_.push_back(rank);
  }
  const std::string name = std::to_string(rank) + "_" + std::to_string(step) + "_" + std::to_string(seq) +
                           "_" + std::string(api) + ".rec";
  publish(name, frame);
  pending_.push_back(dir_ + "/" + name);
  check_taken(false);
}

void SharedDirWriter::end_all() {
  for (std::uint64_t rank : started_) {
    publish("end_" + std::to_string(rank), {});
    markers_.push_back(dir_ + "/end_" + std::to_string(rank));
  }
  started_.clear();
}

namespace {
bool gone(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}
}  // namespace

void SharedDirWriter::check_taken(bool all) {
  if (!all) {
    // A server takes a rank's files in seq order, so the oldest go first; two looks per record keep up.
    for (int i = 0; i < 2 && !pending_.empty() && gone(pending_.front()); ++i) {
      pending_.pop_front();
      ++taken_;
    }
    return;
  }
  const auto before = pending_.size();
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), gone), pending_.end());
  taken_ += before - pending_.size();
}

bool SharedDirWriter::wait_taken(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    check_taken(true);
    if (pending_.empty()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    ::usleep(20 * 1000);
  }
}

std::size_t SharedDirWriter::withdraw() {
  for (auto it = markers_.rbegin(); it != markers_.rend(); ++it) ::unlink(it->c_str());  // end_ first
  markers_.clear();
  for (const std::string& path : pending_)
    if (::unlink(path.c_str()) != 0 && errno == ENOENT) ++taken_;  // taken after all, just now
  pending_.clear();
  return taken_;
}

std::vector<std::string> list_shared_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw Error(ErrorKind::Io, std::string("cannot list: ") + std::strerror(errno), dir, "nfs_path");
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

std::vector<std::byte> read_shared_file(const std::string& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) throw Error(ErrorKind::Format, "a symbolic link, not a record file", path);
    throw Error(ErrorKind::Io, std::string("cannot open: ") + std::strerror(errno), path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Format, "not a regular file", path);
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw Error(ErrorKind::Format,
                "record file of " + std::to_string(st.st_size) + " bytes exceeds the frame limit " +
                    std::to_string(max_bytes),
                path);
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) throw Error(ErrorKind::Io, "the file shrank while it was read", path);
  return bytes;
}

}  // namespace probe::online::detail
