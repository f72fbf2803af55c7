package explain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// `devlink health show` (iproute2 devlink/devlink.c): "pci/BDF:" then
// "reporter NAME" (or "name NAME") and "state healthy|error error N
// recover N ... grace_period MS auto_recover true auto_dump true";
// `devlink health diagnose DEV reporter fw`: "Syndrome: N [Description:
// ...]"; the vnic reporter's counters; and -j JSON. The reporters are
// mlx5's (drivers/net/ethernet/mellanox/mlx5/core/health.c, en/reporter_*.c).

var (
	devlinkDevRE   = lazyre.New(`^(pci|auxiliary)/[\w:.-]+:?`)
	devlinkRepRE   = lazyre.New(`^\s*(?:reporter|name)\s+(\w+)`)
	devlinkStateRE = lazyre.New(`state (healthy|error) error (\d+) recover (\d+)`)
	syndromeRE     = lazyre.New(`(?i)syndrome:?\s*(0x[0-9a-f]+|\d+)`)
	vnicCounterRE  = lazyre.New(`(total_error_queues|send_queue_priority_update_flow|comp_eq_overrun|async_eq_overrun|cq_overrun|invalid_command|quota_exceeded_command|nic_receive_steering_discard|generated_pkt_steering_fail|handled_pkt_steering_fail):?\s*(\d+)`)
)

func init() {
	register(KindDevlinkHealth, &kind{
		title: "devlink health (show, diagnose, dump)",
		anchor: func(ls []string, i int) bool {
			t := trimmed(ls[i])
			return devlinkDevRE.MatchString(t) && (strings.Contains(t, "reporter") || lookahead(ls, i, 2, func(l string) bool { return devlinkRepRE.MatchString(l) })) ||
				strings.HasPrefix(t, "vNIC env counters") || (strings.HasPrefix(t, "Syndrome:") && !strings.Contains(t, ","))
		},
		belongs: func(l string) bool {
			return indented(l) || devlinkDevRE.MatchString(trimmed(l)) || devlinkRepRE.MatchString(l) || kvLineRE.MatchString(l)
		},
		read:     readDevlink,
		commands: [][]string{{"devlink", "health"}},
	})
}

func readDevlink(p *Part, dbs Databases) {
	text := strings.TrimSpace(joinLines(p.text))
	if strings.HasPrefix(text, "{") {
		readDevlinkJSON(p, text)
		return
	}
	dev, rep := "", ""
	for _, l := range p.text {
		t := trimmed(l)
		if m := devlinkDevRE.FindString(t); m != "" {
			dev = strings.TrimSuffix(m, ":")
		}
		if m := devlinkRepRE.FindStringSubmatch(l); m != nil {
			rep = m[1]
		} else if i := strings.Index(t, "reporter "); i >= 0 {
			if f := strings.Fields(t[i:]); len(f) > 1 {
				rep = f[1]
			}
		}
		if m := devlinkStateRE.FindStringSubmatch(t); m != nil {
			errs, _ := strconv.Atoi(m[2])
			rec, _ := strconv.Atoi(m[3])
			reporterFinding(p, dev, rep, m[1], errs, rec)
		}
		if m := syndromeRE.FindStringSubmatch(t); m != nil {
			// Plain digits are decimal even with leading zeros; base 0 only
			// for the 0x form, which it reads in either case.
			base := 10
			if strings.HasPrefix(strings.ToLower(m[1]), "0x") {
				base = 0
			}
			synd, _ := strconv.ParseUint(m[1], base, 64)
			p.fact(cmpOr(dev, "device")+" fw syndrome", m[1])
			if synd != 0 {
				h, ok := healthSyndromes[synd]
				if !ok {
					h = healthSyndromes[1]
				}
				p.add(Finding{Severity: SevProblem, Category: h.category, Device: dev, What: fmt.Sprintf("the fw reporter's syndrome is 0x%x: %s", synd, h.text), Next: h.next})
			}
		}
		for _, m := range vnicCounterRE.FindAllStringSubmatch(t, -1) {
			n, _ := strconv.Atoi(m[2])
			p.fact(cmpOr(dev, "device")+" "+m[1], m[2])
			if n > 0 && m[1] != "send_queue_priority_update_flow" {
				p.add(Finding{Severity: SevWarning, Category: CatSoftware, Device: dev, What: fmt.Sprintf("vNIC counter %s is %d", m[1], n),
					Next: "the driver or an application overran a queue or sent refused commands; correlate with the kernel log"})
			}
		}
	}
	if len(p.Facts) == 0 && len(p.Findings) == 0 {
		p.Error = "no reporter state, syndrome or vNIC counter"
	}
}

func reporterFinding(p *Part, dev, rep, state string, errs, rec int) {
	p.fact(cmpOr(dev, "device")+" "+cmpOr(rep, "reporter"), fmt.Sprintf("%s, %d error(s), %d recovered", state, errs, rec))
	cat := CatFirmware
	if rep == "tx" || rep == "rx" {
		cat = CatSoftware
	}
	switch {
	case state == "error":
		p.add(Finding{Severity: SevProblem, Category: cat, Device: dev, What: fmt.Sprintf("the %s reporter is in error (%d errors, %d recovered): not recovered", rep, errs, rec),
			Next: fmt.Sprintf("devlink health diagnose %s reporter %s; devlink health dump show %s reporter %s for support; devlink health recover to retry", dev, rep, dev, rep)})
	case errs > 0:
		p.add(Finding{Severity: SevWarning, Category: cat, Device: dev, What: fmt.Sprintf("the %s reporter saw %d error(s) and recovered %d", rep, errs, rec),
			Next: "the kernel log around the last dump time says what happened"})
	}
}

func readDevlinkJSON(p *Part, text string) {
	var doc struct {
		Health map[string][]map[string]any `json:"health"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		p.Error = "not valid JSON (cut short?): " + err.Error()
		p.Partial = true
		return
	}
	for dev, reps := range doc.Health {
		for _, r := range reps {
			name := str(r["reporter"]) + str(r["name"])
			errs, _ := r["error"].(float64)
			rec, _ := r["recover"].(float64)
			reporterFinding(p, dev, name, str(r["state"]), int(errs), int(rec))
		}
	}
}
