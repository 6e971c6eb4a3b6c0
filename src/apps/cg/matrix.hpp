#pragma once
// The CG app's matrices (plain C++): a double-precision CSR, the deterministic generators and the
// `--size` specs that name them. docs/cg.md describes each generator.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::cg {

// Square CSR, columns ascending within a row, values double. Column ids are int32.
struct Matrix {
  std::int64_t n = 0;
  std::vector<std::int64_t> row_ptr;  // n + 1 entries
  std::vector<std::int32_t> col;
  std::vector<double> val;

  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  std::int64_t row_nnz(std::int64_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
  // Throws gpsm::Error naming `what` unless the shape is consistent (sizes, ascending row_ptr,
  // columns in range and ascending within each row, finite values).
  void validate(const std::string& what) const;
  // Whether A equals its transpose exactly (pattern and values).
  bool symmetric() const;
  // max_i sum_j |a_ij|: for a symmetric matrix an upper bound of its 2-norm.
  double norm_inf() const;
};

// 2D Poisson, 5-point, Dirichlet: 4 on the diagonal, -1 to each of the up to 4 grid neighbours;
// unknown (x, y) is row y * nx + x.
Matrix poisson2d(std::int64_t nx, std::int64_t ny);
// 3D Poisson, 7-point: 6 on the diagonal, -1 to each face neighbour; row (z * ny + y) * nx + x.
Matrix poisson3d7(std::int64_t nx, std::int64_t ny, std::int64_t nz);
// 3D Poisson, 27-point (HPCG's operator): 26 on the diagonal, -1 to each of the up to 26 neighbours.
Matrix poisson3d27(std::int64_t nx, std::int64_t ny, std::int64_t nz);
// Elasticity-like: 3 unknowns per grid node, the 27-point stencil on 3x3 blocks: A = L27 (x) M with
// M = [[1, .25, .25], [.25, 1, .25], [.25, .25, 1]] (both SPD, so A is SPD); 81 nonzeros per
// interior row. Node (x, y, z) owns rows 3 * node + {0, 1, 2}.
Matrix elastic3d(std::int64_t nx, std::int64_t ny, std::int64_t nz);
// Random banded SPD with about `nnz_per_row` nonzeros per row (>= 3): the weighted Laplacian of a
// random graph on a band of half width w = nnz_per_row - 2 (offset 1 always an edge, each longer
// offset an edge with probability 1/2, so each side holds (nnz_per_row - 1) / 2 entries on
// average), weights in [0.5, 1.5), plus Dirichlet-like ends: edges that would leave [0, n) add
// their weight to the diagonal. Weakly diagonally dominant, strictly at the ends, connected:
// SPD, conditioned like a 1D PDE operator (CG does not converge in a few iterations).
Matrix banded(std::int64_t n, int nnz_per_row, std::uint64_t seed);
// banded(n, nnz_per_row, seed) plus a dense first row and column: a_0j = a_j0 = -1/n for every
// j > 0, with the diagonal raised to keep the dominance. SPD; row 0 holds n nonzeros.
Matrix arrow(std::int64_t n, int nnz_per_row, std::uint64_t seed);

// What a `--size` entry asks for. Grammar (docs/cg.md):
//   poisson2d:N[xNY] | poisson3d:N[xNYxNZ] | poisson27:N[xNYxNZ] | elastic:N[xNYxNZ]
//   | banded:ROWS:NNZ[:SEED] | arrow:ROWS[:NNZ] | <file>.mtx
// each optionally followed by @nnz (nonzero-balanced row split) and @tol=X (stop when
// ||r|| <= X ||b||). Numbers take k, M, G suffixes (powers of 1000).
struct MatrixSpec {
  std::string text;       // the whole entry, as given
  std::string kind;       // poisson2d, poisson3d, poisson27, elastic, banded, arrow, mtx
  std::int64_t dims[3] = {0, 0, 0};
  std::int64_t rows = 0;  // banded, arrow
  int nnz_per_row = 0;    // banded, arrow
  std::uint64_t seed = 1;
  std::string path;       // mtx
  bool balance_nnz = false;
  double tol = 0;         // 0: fixed iterations
};
// Throws std::invalid_argument naming the entry and the grammar.
MatrixSpec parse_spec(const std::string& text);
// The matrix a spec names: a generator, or a Matrix Market file read by the graph apps' reader
// with values kept in double (graph_io::load_matrix_market_f64, its binary cache next to the
// file as <file>.f64.gpsmcsr): each value is the correctly rounded double of its text, integer
// values exact, pattern files ones. Throws gpsm::Error for an unreadable, non-square or
// non-symmetric file.
Matrix load(const MatrixSpec& s);

// Nonzeros of the generated matrix s names, from its stencil or band (interior rows: a bound the
// boundary rows stay under); 0 for a file.
double spec_nnz_bound(const MatrixSpec& s);
// Peak host bytes of a CG run of the generated matrix s: the matrix (8 B per row, 12 per nonzero),
// one plan's local copy of it (4 B per row, 12 per nonzero: partition.hpp), and the larger of
// about 12 vectors of doubles (both variants' starts, the pipelined reference's seven iterates
// while the standard one's x is kept, the gathered x; reference.hpp) and what the upload holds:
// 5 of those vectors and the sliced copy of one GPU's rows (at most 12 B per nonzero times the
// padding bound: sell.hpp). 0 for a file: its reader checks the header itself.
double cg_host_bytes(const MatrixSpec& s);

// One matrix of Table 3.1 of "GPU-Centric Communication Schemes: When CPUs Take a Back Seat" (the
// 18 SuiteSparse SPD matrices of its CG evaluation) and the generated matrix that stands in for it:
// the same kind of operator where the table's matrix has one (a 2D or 3D grid, a 3-dof elasticity
// mesh), else a banded matrix of its rows and nonzeros per row.
struct Table31Entry {
  const char* suitesparse;     // the table's matrix
  std::int64_t rows;           // its rows, as the table gives them
  std::int64_t nnz;            // its nonzeros, as the table gives them
  const char* spec;            // the generator standing in for it (a --size spec)
};
// The table's 18 rows in its order (nonzeros descending).
const std::vector<Table31Entry>& table31();
// Expands a named set to its --size specs, or returns {text} unchanged when text names none.
// `table3.1` (or `t31`) is every table31() entry; `table3.1:I-J` entries I to J (1-based, the
// table's order) so a long run can be split across commands; modifiers after '@' (`@nnz`,
// `@tol=X`) are appended to every spec. Throws std::invalid_argument for a bad range.
std::vector<std::string> expand_named_set(const std::string& text);

// b = A * 1 with the row arithmetic of cg_math.hpp (the right-hand side of every run).
std::vector<double> rhs_ones(const Matrix& a, int lanes);

}  // namespace gpsm::apps::cg
