#pragma once
// GPSM_OMP(parallel for ...): an OpenMP pragma where the compiler has OpenMP; without it the loop
// runs serially (and no unknown-pragma warning appears).
#if defined(_OPENMP)
#define GPSM_OMP_PRAGMA(x) _Pragma(#x)
#define GPSM_OMP(x) GPSM_OMP_PRAGMA(omp x)
#else
#define GPSM_OMP(x)
#endif
