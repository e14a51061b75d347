// h-replay-smpi's program, all of it: SMPI loads a copy of this file for every simulated rank. The
// replay itself is in libhtrace_replay_smpi.so, which the copies share (meson.build says why).
#include "replay/simulated_main.hpp"

int main(int argc, char** argv)
{
    return htrace::replay::simulated_main(argc, argv);
}
