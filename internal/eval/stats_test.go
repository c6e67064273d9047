package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestWilson checks the interval against values computed by hand from
// the formula (centre (x + z²/2)/(n + z²), half-width
// z/(n + z²)·√(x(n−x)/n + z²/4), z = 1.959964), which are scipy's
// binomtest(x, n).proportion_ci(method="wilson"):
//
//	8/10:  centre 9.92073/13.84146 = 0.716740, half 0.226578 → [0.490162, 0.943318]
//	0/10:  [0, 0.277533] (the lower end is 0, not below it)
//	10/10: [0.722467, 1]
//	5/10:  [0.236593, 0.763407]
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		x, n   int
		lo, hi float64
	}{
		{8, 10, 0.4901624715, 0.9433178485},
		{0, 10, 0, 0.2775327999},
		{10, 10, 0.7224672001, 1},
		{5, 10, 0.2365930905, 0.7634069095},
		{0, 0, 0, 1},
	} {
		lo, hi := Wilson(c.x, c.n)
		if !near(lo, c.lo) || !near(hi, c.hi) {
			t.Errorf("Wilson(%d, %d) = [%.9f, %.9f], want [%.9f, %.9f]", c.x, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// TestDropped checks the significance tests against values computed by
// hand:
//
//   - z-test, baseline 45/50, now 35/50: pooled p̂ = 0.8, se =
//     √(0.8·0.2·(2/50)) = 0.08, z = (0.7 − 0.9)/0.08 = −2.5, p = Φ(−2.5) =
//     0.0062097 (statsmodels' proportions_ztest(alternative="smaller")).
//   - the same rates the other way: p = Φ(2.5) = 0.99379, no regression.
//   - Fisher, baseline 10/10, now 5/10 (the pooled rate expects 2.5
//     failures a side: too few for the z-test): the only table as extreme
//     is this one, p = C(15,5)·C(5,5)/C(20,10) = 3003/184756 = 0.0162539
//     (scipy's fisher_exact([[5,5],[10,0]], alternative="less")).
//   - Fisher, 10/10 both: p = 1, no regression.
//   - under 5 runs on a side: insufficient data, whatever the rates.
func TestDropped(t *testing.T) {
	for _, c := range []struct {
		x1, n1, x2, n2 int
		test           string
		p              float64
		verdict        string
	}{
		{45, 50, 35, 50, "z", 0.0062096653, VerdictRegression},
		{35, 50, 45, 50, "z", 0.9937903347, VerdictNone},
		{10, 10, 5, 10, "fisher", 3003.0 / 184756, VerdictRegression},
		{10, 10, 10, 10, "fisher", 1, VerdictNone},
		{4, 4, 0, 4, "", 1, VerdictInsufficient},
		{10, 10, 0, 4, "", 1, VerdictInsufficient},
	} {
		s := Dropped(c.x1, c.n1, c.x2, c.n2)
		if s.Test != c.test || !near(s.P, c.p) || s.Verdict != c.verdict {
			t.Errorf("Dropped(%d/%d → %d/%d) = %+v, want %s p=%.7f %s", c.x1, c.n1, c.x2, c.n2, s, c.test, c.p, c.verdict)
		}
	}
	// The tea-tasting table [[1,3],[3,1]]: P(X ≤ 1) = (1 + 16)/70.
	if p := fisherLess(1, 4, 3, 4); !near(p, 17.0/70) {
		t.Errorf("fisherLess(1/4 vs 3/4) = %.7f, want 17/70 = 0.2428571", p)
	}
}
