package explain

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cxray/cxray/feature/objects"
	"github.com/cxray/cxray/internal/lazyre"
)

// `rdma resource show qp` (iproute2 rdma/res-qp.c): "link DEV/PORT lqpn N
// [rqpn N] type RC state RTS ..." per QP; with -j -r, JSON whose "data"
// holds the raw QP context, decoded with the command database's qpc as
// cxray qp does (feature/objects).

var rdmaQPRE = lazyre.New(`^link (\S+) lqpn (\d+)`)

func init() {
	register(KindRdmaQP, &kind{
		title:    "rdma resource show qp",
		anchor:   func(ls []string, i int) bool { return rdmaQPRE.MatchString(trimmed(ls[i])) },
		belongs:  func(l string) bool { return rdmaQPRE.MatchString(trimmed(l)) || indented(l) },
		read:     readRdmaQP,
		commands: [][]string{{"rdma", "res*", "qp"}},
	})
}

func readRdmaQP(p *Part, dbs Databases) {
	text := strings.TrimSpace(joinLines(p.text))
	if strings.HasPrefix(text, "[") || strings.HasPrefix(text, "{") {
		var qps []map[string]any
		if err := json.Unmarshal([]byte(text), &qps); err != nil {
			p.Error = "not valid JSON (cut short?): " + err.Error()
			p.Partial = true
			return
		}
		p.fact("QPs", fmt.Sprint(len(qps)))
		for _, q := range qps {
			id := fmt.Sprintf("%s/%v lqpn %v", str(q["ifname"]), q["port"], q["lqpn"])
			if raw, ok := q["data"].([]any); ok {
				b := make([]byte, len(raw))
				for i, v := range raw {
					f, _ := v.(float64)
					b[i] = byte(f)
				}
				qp, err := objects.DecodeQPBytes(b)
				if err != nil {
					p.Notes = append(p.Notes, id+": "+err.Error())
					continue
				}
				p.fact(id, fmt.Sprintf("%s %s, next send PSN %d, last acked %d, %d unacked, retries %d/%d", qp.Type, qp.State, qp.NextSendPSN, qp.LastAckedPSN, qp.Unacked, qp.CurRetry, qp.RetryCount))
				if qp.Error {
					p.add(Finding{Severity: SevProblem, Category: CatSoftware, Device: id, What: id + ": " + qp.ErrorNote,
						Next: "the application must find the first error of this QP (its completions), then reset or recreate it"})
				}
				continue
			}
			qpState(p, id, str(q["state"]))
		}
		return
	}
	n := 0
	for _, l := range p.text {
		t := trimmed(l)
		m := rdmaQPRE.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		n++
		f := strings.Fields(t)
		kv := map[string]string{}
		for i := 0; i+1 < len(f); i += 2 {
			kv[f[i]] = f[i+1]
		}
		id := m[1] + " lqpn " + m[2]
		p.fact(id, strings.TrimSpace(kv["type"]+" "+kv["state"]+" "+kv["comm"]))
		qpState(p, id, kv["state"])
	}
	p.fact("QPs", fmt.Sprint(n))
}

func qpState(p *Part, id, state string) {
	switch state {
	case "ERR", "SQE":
		p.add(Finding{Severity: SevProblem, Category: CatSoftware, Device: id, What: id + " is in state " + state + ": its work requests fail (flush) until it is reset",
			Next: "find the first error of this QP (the application's first failed completion, or the kernel log); rdma -j res show qp lqpn N -r and cxray explain decode its context"})
	}
}
