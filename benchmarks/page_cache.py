"""Page-cache state of a benchmark's input files (issue 13).

probe maps a tensor file and asks for 2 MiB page-cache pages when it is the first to read it, so how fast a
warm run is depends on who read the file first: a file cached in 4 KiB pages costs a page-table entry per
4 KiB and more TLB misses on every later run. The benchmarks therefore evict their inputs once and let probe's
untimed warm-up run read them, as a user's first run would (--keep-page-cache skips that), and report the
share of the inputs cached in 2 MiB pages."""
import mmap
import os
import re

MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)  # Linux 5.14+


def evict(paths):
    """Drops the files' pages from the page cache (written back first: only clean pages can be dropped)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def huge_share(paths):
    """Fraction of the files' bytes that a mapping of each maps with 2 MiB entries (reads them if not cached)."""
    total = huge = 0
    for path in paths:
        size = os.path.getsize(path)
        if size == 0:
            continue
        with open(path, "rb") as f:
            m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
            try:
                m.madvise(MADV_POPULATE_READ)
                real = os.path.realpath(path)
                with open("/proc/self/smaps") as smaps:
                    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps.read()):
                        if block.split("\n", 1)[0].endswith(" " + real):
                            pmd = re.search(r"^FilePmdMapped:\s+(\d+) kB", block, re.M)
                            huge += int(pmd.group(1)) * 1024 if pmd else 0
            finally:
                m.close()
        total += size
    return huge / total if total else 0.0


def describe(paths, evicted):
    how = "evicted, then read by probe's warm-up run" if evicted else "as found (--keep-page-cache)"
    return f"page cache: {how}; {huge_share(paths):.0%} of the input bytes cached in 2 MiB pages"
