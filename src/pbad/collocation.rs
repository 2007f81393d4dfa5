//! Collocation nodes and polynomial weights of the position-based collocation method (Pan &
//! Manocha, Section 4.1).
//!
//! An order-`K` step fits a degree-`K` polynomial through `K + 1` configurations at the times
//! (in units of the step `h`, relative to the start of the step) `α_{K−2} − 1, 0, α_1, …,
//! α_{K−1}` with `α_{K−1} = 1` and `α_1 … α_{K−2}` the roots of the shifted Legendre polynomial
//! `L_{K−2}(2α − 1)`; for `K = 2` the first node is `−1` (Eq. 4). The first two configurations
//! come from the previous step, the other `K − 1` are the unknowns `q_*` (Eq. 6).

/// Largest supported order.
pub const MAX_ORDER: usize = 6;

/// Roots of the Legendre polynomial `L_n` on `[−1, 1]`, ascending, by Newton's method from
/// the Chebyshev-like initial guesses `−cos(π (i + 3/4)/(n + 1/2))`.
pub fn legendre_roots(n: usize) -> Vec<f64> {
    let mut r = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = -(std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        for _ in 0..100 {
            // three-term recurrence for L_n and its derivative
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let pn = if n == 0 { 1.0 } else { p1 };
            let pm = if n == 0 { 0.0 } else { p0 };
            let dp = n as f64 * (x * pn - pm) / (x * x - 1.0);
            let dx = pn / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        r.push(x);
    }
    r.sort_by(f64::total_cmp);
    r
}

/// The nodes and weights of one order.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheme {
    /// Order `K` (2 ..= [`MAX_ORDER`]).
    pub order: usize,
    /// The `K + 1` node times in units of `h`: two history nodes, then the `K − 1` new ones.
    pub tau: Vec<f64>,
    /// `d2[i][j] = L_j''(τ_{i+2})`: second derivative of the Lagrange basis polynomial of node
    /// `j` at new node `i` (multiply by `1/h²`), the matrix `H''` of Section 4.1.
    pub d2: Vec<Vec<f64>>,
    /// `d1[i][j] = L_j'(τ_{i+2})`: first derivative at new node `i` (multiply by `1/h`), used
    /// for velocity-dependent forces. For `K = 2` it is the backward difference `(0, −1, 1)`,
    /// which makes the damping term the gradient of a Rayleigh potential (Eq. 5).
    pub d1: Vec<Vec<f64>>,
    /// `end[j] = L_j'(1)`: the velocity at the end of the step (multiply by `1/h`).
    pub end: Vec<f64>,
}

/// `L_j^{(deriv)}(x)` of the Lagrange basis on `nodes`, `deriv` ∈ {0, 1, 2}.
fn lagrange(nodes: &[f64], j: usize, x: f64, deriv: usize) -> f64 {
    let n = nodes.len();
    let den: f64 = (0..n)
        .filter(|&m| m != j)
        .map(|m| nodes[j] - nodes[m])
        .product();
    let others: Vec<f64> = (0..n).filter(|&m| m != j).map(|m| nodes[m]).collect();
    let k = others.len();
    let num = match deriv {
        0 => others.iter().map(|o| x - o).product(),
        1 => (0..k)
            .map(|a| {
                (0..k)
                    .filter(|&b| b != a)
                    .map(|b| x - others[b])
                    .product::<f64>()
            })
            .sum(),
        _ => {
            let mut s = 0.0;
            for a in 0..k {
                for b in 0..k {
                    if a == b {
                        continue;
                    }
                    s += (0..k)
                        .filter(|&c| c != a && c != b)
                        .map(|c| x - others[c])
                        .product::<f64>();
                }
            }
            s
        }
    };
    num / den
}

impl Scheme {
    /// The scheme of order `order`, or `None` outside `2 ..= MAX_ORDER`.
    pub fn new(order: usize) -> Option<Self> {
        if !(2..=MAX_ORDER).contains(&order) {
            return None;
        }
        let mut alpha: Vec<f64> = legendre_roots(order - 2)
            .iter()
            .map(|x| 0.5 * (x + 1.0))
            .collect();
        alpha.push(1.0);
        let first = if order == 2 {
            -1.0
        } else {
            alpha[order - 3] - 1.0
        };
        let mut tau = vec![first, 0.0];
        tau.append(&mut alpha);
        let n = tau.len();
        let d2 = (2..n)
            .map(|i| (0..n).map(|j| lagrange(&tau, j, tau[i], 2)).collect())
            .collect();
        let d1 = if order == 2 {
            vec![vec![0.0, -1.0, 1.0]]
        } else {
            (2..n)
                .map(|i| (0..n).map(|j| lagrange(&tau, j, tau[i], 1)).collect())
                .collect()
        };
        let end = (0..n).map(|j| lagrange(&tau, j, 1.0, 1)).collect();
        Some(Scheme {
            order,
            tau,
            d2,
            d1,
            end,
        })
    }

    /// Number of new configurations per step, `K − 1`.
    pub fn nnew(&self) -> usize {
        self.order - 1
    }
}
