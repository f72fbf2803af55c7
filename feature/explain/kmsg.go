package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// Kernel log lines, as dmesg (plain, -T, -x), syslog, journalctl and
// /dev/kmsg print them. The line anatomy — the device prefix
// "mlx5_core 0000:03:00.0: func:line:(pid N): message", the IB device
// prefix, netdev messages, hex dumps without a prefix — is that of the
// kernel's dev_printk and drivers/net/ethernet/mellanox/mlx5/core/*.c;
// messages are matched on their text, never on function names or line
// numbers, which change between kernel builds.

// Event is one decoded kernel log event.
type Event struct {
	Line     int    `json:"line"`
	Time     string `json:"time,omitempty"`
	Device   string `json:"device,omitempty"`
	Class    string `json:"class"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Meaning  string `json:"meaning,omitempty"`
	Category string `json:"category,omitempty"`
	Next     string `json:"next,omitempty"`
	Fields   []Fact `json:"fields,omitempty"`
}

// Event classes.
const (
	ClassCommand     = "command"
	ClassCQE         = "cqe"
	ClassHealth      = "health"
	ClassProbe       = "probe"
	ClassModule      = "module"
	ClassPort        = "port"
	ClassPCIe        = "pcie"
	ClassTemperature = "temperature"
	ClassQueue       = "queue"
	ClassInfo        = "info"
)

var (
	// Prefixes before the message.
	kmsgRawRE   = lazyre.New(`^<?(\d{1,3}),(\d+),(\d+),[^;]*;`)                                                          // /dev/kmsg: prio,seq,usec,flags;
	dmesgXRE    = lazyre.New(`^\s*(kern|user|daemon|syslog)\s*:\s*(emerg|alert|crit|err|warn|notice|info|debug)\s*:\s*`) // dmesg -x
	levelRE     = lazyre.New(`^<(\d)>`)
	stampRE     = lazyre.New(`^\[\s*(\d+\.\d+|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}|\d{4}-\d\d-\d\d[T ][\d:.,+-]+)\]\s?`)
	syslogRE    = lazyre.New(`^(?:[A-Z][a-z]{2} [ \d]?\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)\s+\S+\s+kernel:\s*`)
	devRE       = lazyre.New(`^(mlx5_core|mlx5_ib|mlx5_vdpa|mlx5_fwctl|mlxfw|pcieport|pci|nvme|infiniband|mlx5_ib\.\w+|mlx5_core\.\w+)\s+([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7](?:\.\d+)?|mlx5_\d+|[\w.-]+\.\d+)(?:\s+([\w.-]+))?:\s?`)
	funcLineRE  = lazyre.New(`^[\w.]+:\d+:\(pid \d+\):\s?`)
	hexLineRE   = lazyre.New(`^(?:[\w ]*?:\s*)?([0-9a-fA-F]{8}):((?:\s+[0-9a-fA-F]{2}){1,16})\s*$`)
	hexDwordsRE = lazyre.New(`^(?:[\w ]*?:\s*)?((?:[0-9a-fA-F]{8}\s+){3}[0-9a-fA-F]{8})\s*$`)
	driverWords = []string{"mlx5_core", "mlx5_ib", "mlx5e", "mlxfw", "infiniband mlx5_", "pcieport", " AER:", "PCIe Bus Error", "cqe_dump"}
)

// kline is a log line taken apart.
type kline struct {
	time, device, netdev, msg string
	prefixed                  bool // a log prefix (time stamp, syslog, kmsg) was found
}

func parseKernelLine(l string) kline {
	var k kline
	s := strings.TrimSpace(l)
	if m := kmsgRawRE.FindStringSubmatch(s); m != nil {
		k.prefixed, k.time = true, m[3]
		s = s[len(m[0]):]
	}
	if m := syslogRE.FindString(s); m != "" {
		k.prefixed = true
		k.time = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m), "kernel:"))
		s = s[len(m):]
	}
	if m := dmesgXRE.FindString(s); m != "" {
		k.prefixed = true
		s = s[len(m):]
	}
	if m := levelRE.FindString(s); m != "" {
		k.prefixed = true
		s = s[len(m):]
	}
	if m := stampRE.FindStringSubmatch(s); m != nil {
		k.prefixed = true
		if k.time == "" {
			k.time = m[1]
		}
		s = s[len(m[0]):]
	}
	s = strings.TrimLeft(s, " ")
	if m := devRE.FindStringSubmatch(s); m != nil {
		k.device = m[2]
		if m[1] == "infiniband" {
			k.device = m[2]
		}
		k.netdev = m[3]
		s = s[len(m[0]):]
	}
	if m := funcLineRE.FindString(s); m != "" {
		s = s[len(m):]
	}
	k.msg = s
	return k
}

// isKernelLine says a line is a kernel log line: it carries a log prefix,
// or it is a driver's message.
func isKernelLine(l string) bool {
	if blank(l) {
		return false
	}
	k := parseKernelLine(l)
	if k.device != "" || (k.prefixed && len(k.msg) > 0) {
		return true
	}
	return knownMessage(strings.TrimSpace(l))
}

// knownMessage says a line, without any prefix, is a message the reader
// decodes (a fragment pasted alone).
func knownMessage(t string) bool {
	for _, re := range []*lazyre.Regexp{cmdFailRE, wcErrorRE, mlx5eCQERE, healthIssueRE, preInitRE, moduleEventRE, aerHeadRE, cmdTimeoutRE, fatalRE, txTimeoutRE, dpdkCQERE} {
		if re.MatchString(t) {
			return true
		}
	}
	return strings.HasPrefix(t, "cqe_dump:")
}

func init() {
	register(KindKernelLog, &kind{
		title: "kernel log (dmesg, journalctl, syslog)",
		anchor: func(ls []string, i int) bool {
			return isKernelLine(ls[i]) && (mlx5Related(ls[i]) || kernelNeighbours(ls, i))
		},
		belongs: func(l string) bool {
			return isKernelLine(l) || hexLineRE.MatchString(strings.TrimSpace(l)) || hexDwordsRE.MatchString(strings.TrimSpace(l)) || aerDetailRE.MatchString(l)
		},
		read:     readKernelLog,
		commands: [][]string{{"dmesg"}, {"journalctl"}, {"/var/log/messages"}, {"/var/log/syslog"}, {"/var/log/kern.log"}, {"kern.log"}},
	})
}

// mlx5Related says a line is one the kernel reader decodes.
func mlx5Related(l string) bool {
	for _, w := range driverWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// kernelNeighbours: a time-stamped line with another one next to it is a
// log, though it names no mlx5 device (a whole dmesg starts so).
func kernelNeighbours(ls []string, i int) bool {
	if !parseKernelLine(ls[i]).prefixed {
		return false
	}
	return i+1 < len(ls) && parseKernelLine(ls[i+1]).prefixed
}

// readKernelLog decodes the part's lines into events.
func readKernelLog(p *Part, dbs Databases) {
	r := &klogReader{p: p, dbs: dbs, devices: map[string]bool{}}
	for i, l := range p.text {
		r.line(p.From+i, l)
	}
	r.flushCQE()
	p.fact("lines", strconv.Itoa(len(p.text)))
	p.fact("mlx5 events", strconv.Itoa(len(p.Events)))
	var devs []string
	for d := range r.devices {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	p.fact("devices", strings.Join(devs, ", "))
	for _, e := range p.Events {
		if e.Severity == SevInfo {
			continue
		}
		p.add(Finding{Severity: e.Severity, Category: e.Category, What: e.Meaning, Next: e.Next, Line: e.Line, Device: e.Device, Evidence: []string{e.Message}})
	}
	if len(p.Events) == 0 {
		p.Notes = append(p.Notes, "no mlx5, PCIe or AER event in these lines")
	}
}

type klogReader struct {
	p       *Part
	dbs     Databases
	devices map[string]bool
	cqe     *cqeState
	aer     *Event
	// sink, when set, gets each event as it is complete (Follower); an
	// AER event's detail lines come after it, so it is held until then.
	sink    func(Event)
	pending *Event
}

func (r *klogReader) emit(e Event) *Event {
	if e.Device != "" {
		r.devices[e.Device] = true
	}
	if r.sink != nil {
		r.release()
		r.pending = &e
		return r.pending
	}
	r.p.Events = append(r.p.Events, e)
	return &r.p.Events[len(r.p.Events)-1]
}

// release hands the held event to the sink.
func (r *klogReader) release() {
	if r.sink != nil && r.pending != nil {
		r.sink(*r.pending)
		r.pending = nil
	}
}

func (r *klogReader) line(n int, raw string) {
	t := strings.TrimSpace(raw)
	if t == "" {
		return
	}
	k := parseKernelLine(raw)
	msg := strings.TrimSpace(k.msg)
	// A hex dump line belongs to the CQE header before it.
	if r.cqe != nil {
		if b, ok := hexBytes(msg); ok {
			r.cqe.bytes = append(r.cqe.bytes, b...)
			return
		}
		if b, ok := hexBytes(t); ok {
			r.cqe.bytes = append(r.cqe.bytes, b...)
			return
		}
		if dumpCQERE.MatchString(msg) {
			return
		}
		if m := cqeSyndLineRE.FindStringSubmatch(msg); m != nil {
			r.cqe.synd, r.cqe.vendor = m[1], m[2]
			return
		}
		r.flushCQE()
	}
	if r.aer != nil {
		if r.aerDetail(msg) {
			return
		}
		r.aer = nil
	}
	ev := Event{Line: n, Time: k.time, Device: k.device, Message: msg}
	if k.netdev != "" {
		ev.Fields = append(ev.Fields, Fact{"netdev", k.netdev})
	}
	for _, d := range decoders {
		if d(r, &ev, msg) {
			return
		}
	}
}

// decoders try each kind of message in turn; the first that knows it
// emits its event.
var decoders = []func(r *klogReader, ev *Event, msg string) bool{
	(*klogReader).command, (*klogReader).cqeHeader, (*klogReader).health, (*klogReader).probe,
	(*klogReader).events, (*klogReader).pcie, (*klogReader).queue,
}

func hexBytes(s string) ([]byte, bool) {
	if m := hexLineRE.FindStringSubmatch(s); m != nil {
		var b []byte
		for _, f := range strings.Fields(m[2]) {
			v, _ := strconv.ParseUint(f, 16, 8)
			b = append(b, byte(v))
		}
		return b, true
	}
	if m := hexDwordsRE.FindStringSubmatch(s); m != nil {
		var b []byte
		for _, f := range strings.Fields(m[1]) {
			v, _ := strconv.ParseUint(f, 16, 32)
			b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		return b, true
	}
	return nil, false
}

func hexU(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 64)
	return v
}

func hx(v uint64) string { return fmt.Sprintf("0x%x", v) }

// KernelEvents decodes text as a kernel log (dmesg's, a kmsg dump) and
// returns its events, with the line each starts at.
func KernelEvents(text string, dbs Databases) []Event {
	p := &Part{Kind: KindKernelLog, From: 1, text: splitLines(text)}
	p.To = len(p.text)
	readKernelLog(p, dbs)
	return p.Events
}
