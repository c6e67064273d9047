package eval

import "math"

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of x successes in n trials
// (Wilson 1927; scipy's binomtest(x, n).proportion_ci(method="wilson")):
// centre (x + z²/2)/(n + z²), half-width z/(n + z²)·√(x(n−x)/n + z²/4).
// Unlike p ± z·√(p(1−p)/n), it stays within [0, 1] and is not empty at
// 0 or n successes. With no trials it is [0, 1].
func Wilson(x, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	fx, fn, z2 := float64(x), float64(n), z95*z95
	centre := (fx + z2/2) / (fn + z2)
	half := z95 / (fn + z2) * math.Sqrt(fx*(fn-fx)/fn+z2/4)
	return max(0, centre-half), min(1, centre+half)
}

// MinRuns is the fewest runs on each side for a comparison to say
// anything: below it, the verdict is insufficient data, never a
// regression.
const MinRuns = 5

// Alpha is the significance level of a regression.
const Alpha = 0.05

// The verdicts of a comparison with a baseline.
const (
	VerdictRegression   = "regression"
	VerdictNone         = "no regression"
	VerdictInsufficient = "insufficient data"
	VerdictNew          = "not in the baseline"
)

// Significance is the test of whether the pass rate of cur (x2 of n2)
// dropped from the baseline's (x1 of n1).
type Significance struct {
	// Test is "z" (one-sided two-proportion z-test, pooled) or "fisher"
	// (Fisher's exact test, one-sided), or "" when none was made.
	Test    string  `json:"test,omitempty"`
	P       float64 `json:"p"`
	Verdict string  `json:"verdict"`
}

// Dropped tests whether x2 of n2 is a significantly lower pass rate than
// x1 of n1. With fewer than MinRuns runs on a side it says insufficient
// data. When every cell the pooled rate expects holds 5 or more, the
// one-sided z-test (statsmodels' proportions_ztest(alternative="smaller"));
// otherwise Fisher's exact test (scipy's fisher_exact(alternative="less")
// of [[x2, n2−x2], [x1, n1−x1]]), whose p-value holds for small counts.
func Dropped(x1, n1, x2, n2 int) Significance {
	if n1 < MinRuns || n2 < MinRuns {
		return Significance{Verdict: VerdictInsufficient, P: 1}
	}
	var s Significance
	pooled := float64(x1+x2) / float64(n1+n2)
	small := false
	for _, n := range []int{n1, n2} {
		if float64(n)*pooled < 5 || float64(n)*(1-pooled) < 5 {
			small = true
		}
	}
	if small {
		s.Test, s.P = "fisher", fisherLess(x2, n2, x1, n1)
	} else {
		s.Test, s.P = "z", zSmaller(x1, n1, x2, n2)
	}
	s.Verdict = VerdictNone
	if s.P < Alpha && float64(x2)/float64(n2) < float64(x1)/float64(n1) {
		s.Verdict = VerdictRegression
	}
	return s
}

// zSmaller is the p-value of the one-sided pooled two-proportion z-test
// that p2 < p1: z = (p̂₂−p̂₁)/√(p̂(1−p̂)(1/n₁+1/n₂)), p = Φ(z).
func zSmaller(x1, n1, x2, n2 int) float64 {
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	p := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 1
	}
	z := (p2 - p1) / se
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// fisherLess is the p-value of Fisher's exact test, one-sided ("less"),
// of the table [[a, n−a], [c, m−c]]: the probability, with the margins
// fixed, of a top-left cell of a or less (the hypergeometric law).
func fisherLess(a, n, c, m int) float64 {
	k := a + c // successes in all
	total := n + m
	p := 0.0
	for x := max(0, k-m); x <= a; x++ {
		p += math.Exp(logChoose(k, x) + logChoose(total-k, n-x) - logChoose(total, n))
	}
	return min(p, 1)
}

func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
