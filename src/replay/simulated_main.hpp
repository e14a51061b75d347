#pragma once
// h-replay's main, as libhtrace_replay_smpi.so exports it to h-replay-smpi's program (smpi_main.cpp).

namespace htrace::replay {

int simulated_main(int argc, char** argv);

}  // namespace htrace::replay
