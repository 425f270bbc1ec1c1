// SKELETON STUB: replaced by the CLI.
#include "pixflow/pixflow.hpp"
int main() { return 0; }
