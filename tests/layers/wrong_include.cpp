// Compiled with the runtime library's include path by the layers.runtime_cannot_see_scope test:
// the runtime sits below scope, so this include must not resolve.
#include "scope/results.hpp"
