package bench

import (
	"slices"
)

// Summary is a cell's runs in a few numbers: the median, min and max of
// the successful runs' results, and which run is the median one (the
// table shows its CPU figures).
type Summary struct {
	Runs   int     `json:"runs"`   // successful runs
	Failed int     `json:"failed"` // failed runs
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Unit   string  `json:"unit"`
	// Retransmits is the median of the runs' TCP retransmits; null when
	// the results carry none.
	Retransmits *float64 `json:"retransmits"`
	// MedianRun indexes Runs: the successful run whose result is the
	// median (the lower of the two middle ones for an even count).
	MedianRun int `json:"median_run"`
}

// summarize sums up a cell's runs; nil when none succeeded.
func summarize(runs []RunResult) *Summary {
	var ok []int // indexes of successful runs
	for i, r := range runs {
		if r.Result != nil {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortStableFunc(ok, func(a, b int) int {
		x, y := runs[a].Result.Value, runs[b].Result.Value
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	vals := make([]float64, len(ok))
	var retr []float64
	for i, j := range ok {
		vals[i] = runs[j].Result.Value
		if n := runs[j].Result.Retransmits; n != nil {
			retr = append(retr, float64(*n))
		}
	}
	s := &Summary{Runs: len(ok), Failed: len(runs) - len(ok), Median: median(vals), Min: vals[0], Max: vals[len(vals)-1],
		Unit: runs[ok[0]].Result.Unit, MedianRun: ok[(len(ok)-1)/2]}
	if len(retr) > 0 {
		slices.Sort(retr)
		m := median(retr)
		s.Retransmits = &m
	}
	return s
}

// median of sorted values: the middle one, or the mean of the two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
