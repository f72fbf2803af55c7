package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/feature/linkeye"
)

// mlxlink -e (--show_eye) prints "EYE Opening Info": one row per value,
// the lanes comma-separated ("Lane : 0, 1, 2, 3", "Last FOM : 144, 144,
// 66, 144"; 16 nm and older devices a grade row), and in --json each row's
// "values". The lanes are judged against each other as `cxray link
// --show_eye` judges them (feature/linkeye).

const eyeSection = "EYE Opening Info"

// eyeFigureRows are the rows a lane is compared by, first present wins.
var eyeFigureRows = []string{"Last FOM", "Physical Grade", "Grade", "Mid Grades"}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// readMlxlinkEye reads the eye section of an mlxlink part, if it has one.
func readMlxlinkEye(p *Part, kv map[string]map[string]string) {
	var rows map[string]string
	for s, m := range kv {
		if strings.EqualFold(s, eyeSection) {
			rows = m
		}
	}
	row := func(name string) string {
		for k, v := range rows {
			if strings.EqualFold(k, name) {
				return v
			}
		}
		return ""
	}
	name, fig := "", ""
	for _, n := range eyeFigureRows {
		if v := row(n); v != "" {
			name, fig = n, v
			break
		}
	}
	if fig == "" {
		return
	}
	vals := splitList(fig)
	lanes := splitList(row("Lane"))
	if len(lanes) == 0 {
		for i := range vals {
			lanes = append(lanes, strconv.Itoa(i))
		}
	}
	// Every per-lane row lists as many lanes: fewer is a paste cut short.
	for k, v := range rows {
		if n := len(splitList(v)); k != "FOM Mode" && n > 1 && n != len(lanes) || strings.EqualFold(k, name) && n != len(lanes) {
			p.Partial = true
			p.inputFinding(fmt.Sprintf("the %s rows do not list the same lanes (%s: %d, Lane: %d): cut short?", eyeSection, k, n, len(lanes)),
				"paste the whole 'mlxlink -d DEV -e' output, or run cxray link -d DEV --show_eye")
			return
		}
	}
	p.fact("eye "+strings.ToLower(name)+" per lane", strings.Join(vals, ", "))
	figs := map[string]uint64{}
	var best uint64
	for i, v := range vals {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			continue // N/A: a lane not measured is no reading
		}
		figs[lanes[i]] = n
		best = max(best, n)
	}
	var bad, ev []string
	for _, l := range lanes {
		if n, ok := figs[l]; ok && linkeye.Below(n, best) {
			bad = append(bad, l)
			ev = append(ev, fmt.Sprintf("lane %s %s %d, the best lane's %d", l, name, n, best))
		}
	}
	if len(bad) == 0 {
		return
	}
	what := fmt.Sprintf("the receive eye of lane %s is much smaller than the other lanes' (%s)", strings.Join(bad, ", "), name)
	if best == 0 {
		what = fmt.Sprintf("the receive eye of every lane is closed (%s 0)", name)
	}
	p.add(Finding{Severity: SevWarning, Category: CatHardware, What: what, Evidence: ev,
		Next: "reseat or swap the cable or module to see whether the lane follows it; clean the connector; compare the lane's errors (cxray link -d DEV --counters)"})
}
