package prm

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// ParseUint parses an unsigned number in any base Go accepts (0x, 0o, 0b,
// decimal, with _ separators).
func ParseUint(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number (use decimal, 0x.., 0o.. or 0b..)", s)
	}
	return v, nil
}

// parseBig parses a possibly negative integer of any size in any base.
func parseBig(s string) (*big.Int, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	// Base 0 reads the sign and the 0x/0o/0b prefixes; but it would also
	// read a bare leading zero as octal, and "010" is ten here.
	base := 10
	if u := strings.TrimLeft(s, "+-"); len(u) > 1 && u[0] == '0' && strings.ContainsRune("xXoObB", rune(u[1])) {
		base = 0
	}
	return new(big.Int).SetString(s, base)
}

// Closest returns up to max candidates closest to name, best first. It is used
// for "did you mean" suggestions; candidates farther than a third of the
// name's length (at least 2 edits) are dropped.
func Closest(name string, candidates []string, max int) []string {
	type scored struct {
		s      string
		d      int
		prefix bool
	}
	low := strings.ToLower(name)
	limit := len(name) / 3
	if limit < 2 {
		limit = 2
	}
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(low, lc)
		prefix := strings.HasPrefix(lc, low) || strings.HasPrefix(low, lc)
		if prefix && d > 1 {
			d = 1 + d/4
		}
		if d <= limit {
			out = append(out, scored{c, d, prefix})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		if out[i].prefix != out[j].prefix {
			return out[i].prefix // a completion beats a substitution
		}
		return out[i].s < out[j].s
	})
	res := make([]string, 0, max)
	for i := 0; i < len(out) && i < max; i++ {
		res = append(res, out[i].s)
	}
	return res
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours each cost one,
// so that MTPM is one edit from MTMP (a swap people make), not two.
func editDistance(a, b string) int {
	// Three rows: two back for transpositions.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// EditDistance is editDistance for callers outside the package (search
// suggestions), case-insensitive.
func EditDistance(a, b string) int { return editDistance(strings.ToLower(a), strings.ToLower(b)) }
