// An embedder's own MPI program using probe::mpi from an installed probe: it initialises MPI itself, hands
// probe a group over its communicator and shares work through probe's queue.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "probe/mpi.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int ran = 0;
  {
    auto group = probe::mpi::group_over(MPI_COMM_WORLD);
    const std::vector<double> weights = {1, 4, 2, 8};
    ran = static_cast<int>(probe::run_work_queue(*group, weights, [](std::size_t) {}).size());
    std::printf("mpi consumer: rank %d of %d ran %d items\n", group->rank(), group->size(), ran);
  }
  MPI_Finalize();
  return ran == 4 ? 0 : 1;
}
