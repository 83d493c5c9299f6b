// Internal: reading a whole input file, and creating output files without ever clobbering or interleaving
// with another run. Every function is safe to call from any thread; the objects are not shared between
// threads.
#pragma once

#include <string>

namespace probe::detail {

/// The bytes of `path` (binary). When it cannot be opened, throws Io naming `path` with the message
/// `cannot_open`, followed by ": <strerror>" when `with_reason`.
std::string read_whole_file(const std::string& path, const std::string& cannot_open,
                            bool with_reason = false);

/// An open file descriptor holding an exclusive flock(2) for its lifetime. flock locks belong to
/// the open file description, so other descriptors this process opens on the file still write freely,
/// while a second process (or a second LockedFile) asking for the lock is refused.
class LockedFile {
 public:
  LockedFile() = default;
  ~LockedFile();
  LockedFile(LockedFile&& other) noexcept;
  LockedFile& operator=(LockedFile&& other) noexcept;
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  /// Creates `path` (0640) with O_EXCL and locks it. Returns an unopened LockedFile when the path
  /// already exists (including as a dangling symlink); throws Io on any other failure.
  static LockedFile create_new(const std::string& path);
  /// Opens an existing regular file read-write (no symlinks) and locks it; throws Io naming the
  /// file when another process holds the lock.
  static LockedFile open_existing(const std::string& path);

  bool is_open() const noexcept { return fd_ >= 0; }
  int fd() const noexcept { return fd_; }
  /// Cuts the file to `size` bytes (a torn tail) without replacing the locked inode.
  void truncate(std::size_t size, const std::string& path_for_errors) const;

 private:
  int fd_ = -1;
};

/// Moves a complete temporary file to `final_path` only if nothing exists there yet (link + unlink,
/// atomic, never replaces). Throws InvalidArgument naming `final_path` when it exists; the temporary
/// is removed in every case.
void publish_new_file(const std::string& temp_path, const std::string& final_path);

/// Throws Error(Io) naming `path` and `field` unless `path` exists: `missing` when it does not, else the
/// system's reason (a directory without search permission, a symlink loop), which "missing" would hide.
void require_exists(const std::string& path, const std::string& missing, const std::string& field = {});

}  // namespace probe::detail
