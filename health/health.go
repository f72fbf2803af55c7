// Package health is the first look at a suspicious adapter: identity,
// access, ports, modules, temperatures, configuration, counters and MAC
// drift, each with a verdict (ok, warn, fail), what it means and what to do.
package health

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/units"
)

// Status is a check's verdict.
type Status string

// Verdicts, in rising order.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skipped"
)

func (s Status) rank() int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// Check is one line of the report.
type Check struct {
	Name    string   `json:"name"`
	Status  Status   `json:"status"`
	Summary string   `json:"summary"`
	Details []string `json:"details,omitempty"`
	Next    string   `json:"next_step,omitempty"`
}

// Report is the health of one device.
type Report struct {
	Device  string  `json:"device"`
	BDF     string  `json:"bdf"`
	Backend string  `json:"backend"`
	Status  Status  `json:"status"`
	Checks  []Check `json:"checks"`
}

// Module is what the modules check needs from one port's module.
type Module struct {
	Port     int
	Verdicts []optics.Verdict
}

// Options supply what the device's registers cannot: module readings,
// NV configuration, the OS view, RDMA counters, the clock between samples.
type Options struct {
	// Modules reads each port's module twice, Interval apart (using
	// Sleep), to catch frozen monitors, and diagnoses it. The counters are
	// sampled before and after, so one wait serves both.
	Modules func(ctx context.Context, ports []int) ([]Module, error)
	// NV returns the parameters whose Next Boot differs from Current
	// ("NAME current -> next") and suspicious combinations.
	NV func(ctx context.Context) (pending, suspicious []string, err error)
	// OSMACs are the interfaces' current MACs (netdev -> MAC).
	OSMACs map[string]string
	// RDMA returns the RDMA hw_counters of a port, when the backend has them.
	RDMA func(ctx context.Context, port int) (map[string]uint64, error)
	// Sleep waits between the two counter samples (the emulator passes one
	// that advances its clock); Interval is how long.
	Sleep    func(ctx context.Context, d time.Duration) error
	Interval time.Duration
	// Now is the clock of the device (for firmware age).
	Now func() time.Time
}

// Run performs every check. A check that cannot run says why and is
// skipped; only the identity read is essential.
func Run(ctx context.Context, d *dev.Device, o Options) *Report {
	r := &Report{Device: d.Name, BDF: d.BDF, Backend: d.Backend}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	id, idCheck := identity(ctx, d)
	r.add(idCheck)
	r.add(access(d))
	if idCheck.Status == Fail {
		r.finish()
		return r
	}
	ports := make([]int, 0, id.Ports)
	for p := 1; p <= max(id.Ports, 1); p++ {
		ports = append(ports, p)
	}
	r.add(portsCheck(ctx, d, ports))
	before, errA := counters(ctx, d, ports, o)
	// The module check reads twice around the same interval the counters
	// use, so frozen monitors show without a second wait.
	var mods []Module
	var modErr error
	if o.Modules != nil {
		mods, modErr = o.Modules(ctx, ports)
	} else if errA == nil {
		errA = o.Sleep(ctx, o.Interval)
	}
	after, errB := counters(ctx, d, ports, o)
	r.add(modulesCheck(mods, modErr, o.Modules != nil))
	r.add(temperatures(ctx, d, ports))
	r.add(configuration(ctx, o))
	r.add(countersCheck(before, after, errA, errB, o.Interval))
	r.add(macDrift(id, o.OSMACs))
	r.finish()
	return r
}

func (r *Report) add(c Check) { r.Checks = append(r.Checks, c) }

func (r *Report) finish() {
	r.Status = OK
	for _, c := range r.Checks {
		if c.Status.rank() > r.Status.rank() {
			r.Status = c.Status
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ---- identity

func identity(ctx context.Context, d *dev.Device) (dev.Identity, Check) {
	c := Check{Name: "identity"}
	id, err := d.Identity(ctx)
	if err != nil {
		c.Status, c.Summary = Fail, "cannot read the firmware's identity (MGIR): "+err.Error()
		c.Next = "check the device name with 'cxray status' and that no other tool holds the adapter; the other checks were not run"
		return id, c
	}
	c.Status = OK
	c.Summary = fmt.Sprintf("firmware %s, PSID %s, PRM database %s", id.Firmware, id.PSID, d.DB.Revision)
	built, ok := firmwareDate(ctx, d)
	revDate, known := RevisionDate(d.DB.Revision)
	switch {
	case !ok || !known:
		c.Details = append(c.Details, "the firmware build date or the database revision date is unknown; cannot compare their ages")
	case built.Sub(revDate) > MaxDatabaseLag:
		c.Status = Warn
		c.Summary += fmt.Sprintf("; the database (%s, %s) is older than the firmware (built %s) by %s", d.DB.Revision,
			revDate.Format("2006-01"), built.Format("2006-01-02"), monthsText(built.Sub(revDate)))
		c.Details = append(c.Details, renamesSince(d.DB.Revision)...)
		c.Next = "fields may have been renamed, moved or added since; use the newest ADB you have (--adb, e.g. NVIDIA MFT's) and see what changed with 'cxray prm diff OLD.adb NEW.adb REG'"
	default:
		c.Details = append(c.Details, fmt.Sprintf("firmware built %s, database revision of %s", built.Format("2006-01-02"), revDate.Format("2006-01")))
	}
	return id, c
}

// MaxDatabaseLag is how much newer than the PRM database the firmware may
// be before the identity check warns: PRM revisions come about twice a
// year, and firmware of a branch keeps its registers compatible; two years
// apart, fields are likely to differ.
const MaxDatabaseLag = 2 * 365 * 24 * time.Hour

func monthsText(d time.Duration) string {
	return fmt.Sprintf("%d months", int(d.Hours()/24/30.4))
}

// firmwareDate reads MGIR's build date (BCD digits).
func firmwareDate(ctx context.Context, d *dev.Device) (time.Time, bool) {
	r, err := d.Get(ctx, "MGIR", nil, nil, 0)
	if err != nil {
		return time.Time{}, false
	}
	bcd := func(p string) (int, bool) {
		v, err := r.Decoded.Get(p)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strconv.FormatUint(v.Uint(), 16))
		return n, err == nil
	}
	y, ok1 := bcd("fw_info.year")
	m, ok2 := bcd("fw_info.month")
	day, ok3 := bcd("fw_info.day")
	if !ok1 || !ok2 || !ok3 || y < 2000 || m < 1 || m > 12 || day < 1 || day > 31 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), day, 0, 0, 0, 0, time.UTC), true
}

// ---- access

func access(d *dev.Device) Check {
	c := Check{Name: "access", Status: OK}
	switch d.Backend {
	case "direct":
		c.Summary = "direct access through the PCI config-space gateway: every register is readable"
	case "emulator":
		c.Summary = "the built-in emulator (same protocol as hardware)"
	case "kernel":
		c.Status = Warn
		c.Summary = "the read-only kernel backend: no registers, so ports, modules and counters come from sysfs and netlink only"
		c.Next = "run as root with the PCI address (-d 0000:03:00.0) for register-level checks; if root fails with 'lockdown', Secure Boot blocks config-space writes"
	default:
		c.Summary = d.Backend
	}
	return c
}

// ---- ports

func portsCheck(ctx context.Context, d *dev.Device, ports []int) Check {
	c := Check{Name: "ports", Status: OK}
	var up []string
	for _, p := range ports {
		idx := []prm.Assignment{{Path: "local_port", Value: strconv.Itoa(p)}}
		paos, err := d.Get(ctx, "PAOS", idx, nil, 0)
		if err != nil {
			c.Details = append(c.Details, fmt.Sprintf("port %d: PAOS unreadable: %v", p, err))
			continue
		}
		// By number: the values are the PRM's in every revision, the enum
		// names are not (Rev 0.51 has none for oper_status).
		admin, oper := numOf(paos.Decoded, "admin_status"), numOf(paos.Decoded, "oper_status")
		if oper != paosUp {
			if admin == paosUp || admin == paosUpOnce {
				c.Status = Fail
				c.Details = append(c.Details, fmt.Sprintf("port %d is %s while enabled", p, enumOf(paos.Decoded, "oper_status")))
				c.Next = "check the module and cable of the port ('cxray module --port N'), the link partner, and PDDR's troubleshooting page ('cxray reg get PDDR --index page_select=1,local_port=N')"
			} else {
				c.Details = append(c.Details, fmt.Sprintf("port %d is disabled (admin_status %s)", p, enumOf(paos.Decoded, "admin_status")))
			}
			continue
		}
		ptys, err := d.Get(ctx, "PTYS", append(idx, prm.Assignment{Path: "proto_mask", Value: "4"}), nil, 0)
		if err != nil {
			up = append(up, fmt.Sprintf("port %d up", p))
			continue
		}
		rate, _ := ptys.Decoded.Get("data_rate_oper")
		maxRate, _ := ptys.Decoded.Get("max_port_rate")
		gbps := float64(rate.Uint()) / 10
		up = append(up, fmt.Sprintf("port %d up at %gG", p, gbps))
		if maxRate.Uint() > 0 && gbps < float64(maxRate.Uint()) {
			if c.Status == OK {
				c.Status = Warn
			}
			c.Details = append(c.Details, fmt.Sprintf("port %d runs at %gG, below the port's %dG", p, gbps, maxRate.Uint()))
			if c.Next == "" {
				c.Next = "a slower link usually means a slower module or cable, or a partner that advertises less: compare 'cxray module --port N' and PTYS's eth_proto_lp_advertise"
			}
		}
	}
	c.Summary = strings.Join(up, ", ")
	if c.Summary == "" {
		c.Summary = "no port is up"
	}
	return c
}

// PAOS status values.
const (
	paosUp     = 1
	paosUpOnce = 3
)

func numOf(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		return ^uint64(0)
	}
	return v.Uint()
}

func enumOf(d *prm.Decoded, path string) string {
	v, err := d.Get(path)
	if err != nil {
		return ""
	}
	if n, ok := v.EnumName(); ok {
		return n
	}
	return strconv.FormatUint(v.Uint(), 10)
}

// ---- modules

func modulesCheck(mods []Module, err error, asked bool) Check {
	c := Check{Name: "modules", Status: OK}
	switch {
	case !asked:
		c.Status, c.Summary = Skip, "module readings are not available through this backend"
		return c
	case err != nil:
		c.Status, c.Summary = Warn, "modules could not be read: "+err.Error()
		c.Next = "run 'cxray module --all' for details"
		return c
	}
	n := 0
	for _, m := range mods {
		for _, v := range m.Verdicts {
			n++
			st := Warn
			switch v.Code {
			case "i2c_hang", "frozen_monitors", "threshold_alarm", "eeprom_checksum", "unsupported_module":
				st = Fail
			}
			if st.rank() > c.Status.rank() {
				c.Status = st
				c.Next = v.NextStep
			}
			c.Details = append(c.Details, fmt.Sprintf("port %d: %s (%s): %s", m.Port, v.Code, v.Category, v.Summary))
		}
	}
	if n == 0 {
		c.Summary = fmt.Sprintf("%d module(s) read, no problem found", len(mods))
	} else {
		c.Summary = fmt.Sprintf("%d problem(s) on %d module(s)", n, len(mods))
	}
	return c
}

// ---- temperatures

func temperatures(ctx context.Context, d *dev.Device, ports []int) Check {
	c := Check{Name: "temperatures", Status: OK}
	u, _ := units.Lookup("MTMP", "temperature")
	var parts []string
	read := func(sensor int, label string) {
		r, err := d.Get(ctx, "MTMP", []prm.Assignment{{Path: "sensor_index", Value: strconv.Itoa(sensor)}}, nil, 0)
		if err != nil {
			return // an empty cage has no sensor
		}
		t, err1 := r.Decoded.Get("temperature")
		hi, err2 := r.Decoded.Get("temperature_threshold_hi")
		if err1 != nil {
			return
		}
		tc := u.Apply(t.Uint(), t.Step().Width).Value
		parts = append(parts, fmt.Sprintf("%s %.1f °C", label, tc))
		if err2 != nil || hi.Uint() == 0 {
			return
		}
		hc := u.Apply(hi.Uint(), hi.Step().Width).Value
		switch {
		case tc >= hc:
			c.Status = Fail
			c.Details = append(c.Details, fmt.Sprintf("%s at %.1f °C is at or above its alarm threshold %.1f °C", label, tc, hc))
			c.Next = "check airflow, fans and the room; a module this hot shuts down or ages fast: reseat or replace it if it stays hot"
		case tc >= hc-10:
			if c.Status == OK {
				c.Status = Warn
				c.Next = "watch it with 'cxray monitor --what temp'; check airflow"
			}
			c.Details = append(c.Details, fmt.Sprintf("%s at %.1f °C is within 10 °C of its alarm threshold %.1f °C", label, tc, hc))
		}
	}
	read(0, "ASIC")
	for _, p := range ports {
		read(63+p, fmt.Sprintf("module %d", p-1))
	}
	c.Summary = strings.Join(parts, ", ")
	if c.Summary == "" {
		c.Status, c.Summary = Skip, "no temperature sensor answered"
	}
	return c
}

// ---- configuration

func configuration(ctx context.Context, o Options) Check {
	c := Check{Name: "configuration", Status: OK}
	if o.NV == nil {
		c.Status, c.Summary = Skip, "NV configuration is not readable through this backend"
		return c
	}
	pending, suspicious, err := o.NV(ctx)
	if err != nil {
		c.Status, c.Summary = Warn, "NV configuration could not be read: "+err.Error()
		c.Next = "run 'cxray config query -e' for details"
		return c
	}
	if len(pending) > 0 {
		c.Status = Warn
		c.Details = append(c.Details, pending...)
		c.Next = "these take effect after a firmware reset: apply with 'cxray config apply' (MFRL) where the firmware allows, or reboot; or undo them with 'cxray config set'"
	}
	if len(suspicious) > 0 {
		c.Status = Warn
		c.Details = append(c.Details, suspicious...)
		if c.Next == "" {
			c.Next = "review these settings with 'cxray config query -e' and change them with 'cxray config set'"
		}
	}
	switch {
	case len(pending)+len(suspicious) == 0:
		c.Summary = "Next Boot equals Current; nothing suspicious"
	default:
		c.Summary = fmt.Sprintf("%d change(s) pending until the next firmware reset, %d suspicious setting(s)", len(pending), len(suspicious))
	}
	return c
}

// ---- counters

// sample is one read of the error counters of every port.
type sample struct {
	values map[string]uint64 // "port1.symbol_errors"
	rdma   map[string]uint64
}

// errorCounters are PPCNT counters that stay at zero on a healthy link,
// by group; rs_fec_uncorrectable_blocks fails, the others warn.
var errorCounters = map[string][]string{
	"0":  {"a_frame_check_sequence_errors", "a_symbol_error_during_carrier", "a_alignment_errors"},
	"1":  {"if_in_errors", "if_out_errors", "if_in_discards"},
	"18": {"symbol_errors", "sync_headers_errors", "rs_fec_uncorrectable_blocks"},
}

// RetransmissionCounters are the RDMA counters that move when RoCE
// retransmits (kernel hw_counters names).
var RetransmissionCounters = []string{"duplicate_request", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err",
	"rnr_nak_retry_err", "implied_nak_seq_err", "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart"}

func counters(ctx context.Context, d *dev.Device, ports []int, o Options) (*sample, error) {
	s := &sample{values: map[string]uint64{}, rdma: map[string]uint64{}}
	for _, p := range ports {
		for g, names := range errorCounters {
			r, err := d.Get(ctx, "PPCNT", []prm.Assignment{{Path: "local_port", Value: strconv.Itoa(p)}, {Path: "grp", Value: g}}, nil, 0)
			if err != nil {
				return nil, err
			}
			want := map[string]bool{}
			for _, n := range names {
				want[n] = true
			}
			for _, row := range r.Decoded.Rows() {
				if row.Value.Kind() != prm.KindJoined {
					continue
				}
				if name := row.Path[strings.LastIndexByte(row.Path, '.')+1:]; want[name] {
					s.values[fmt.Sprintf("port%d.%s", p, name)] = row.Value.Uint()
				}
			}
		}
		if o.RDMA != nil {
			if m, err := o.RDMA(ctx, p); err == nil {
				for _, n := range RetransmissionCounters {
					if v, ok := m[n]; ok {
						s.rdma[fmt.Sprintf("port%d.%s", p, n)] = v
					}
				}
			}
		}
	}
	return s, nil
}

func countersCheck(a, b *sample, errA, errB error, interval time.Duration) Check {
	c := Check{Name: "counters", Status: OK}
	if errA != nil || errB != nil || a == nil || b == nil {
		c.Status, c.Summary = Warn, fmt.Sprintf("counters could not be sampled twice: %v", firstErr(errA, errB))
		return c
	}
	secs := interval.Seconds()
	var moving []string
	for _, k := range sortedKeys(b.values) {
		if d := int64(b.values[k] - a.values[k]); d > 0 && b.values[k] >= a.values[k] {
			st := Warn
			if strings.HasSuffix(k, "uncorrectable_blocks") {
				st = Fail
			}
			if st.rank() > c.Status.rank() {
				c.Status = st
			}
			moving = append(moving, fmt.Sprintf("%s +%d (%.3g/s)", k, d, float64(d)/secs))
		}
	}
	if len(moving) > 0 {
		c.Details = append(c.Details, moving...)
		c.Next = "errors on a link point at the module, cable or connector: clean or reseat them, compare with 'cxray module --verify', and watch with 'cxray monitor --what counters --alert \"rate(symbol_errors) > 0\"'"
	}
	var retrans []string
	for _, k := range sortedKeys(b.rdma) {
		if d := int64(b.rdma[k] - a.rdma[k]); d > 0 && b.rdma[k] >= a.rdma[k] {
			retrans = append(retrans, fmt.Sprintf("%s +%d (%.3g/s)", k, d, float64(d)/secs))
		}
	}
	if len(retrans) > 0 {
		if c.Status == OK {
			c.Status = Warn
		}
		c.Details = append(c.Details, retrans...)
		if c.Next == "" {
			c.Next = "RoCE is retransmitting: see 'cxray roce status' and 'cxray roce advise' (loss on the path, or a PSN window smaller than the bandwidth-delay product)"
		}
	}
	if len(moving)+len(retrans) == 0 {
		c.Summary = fmt.Sprintf("no error counter moved in %s", interval)
	} else {
		c.Summary = fmt.Sprintf("%d error counter(s) and %d RoCE retransmission counter(s) moved in %s", len(moving), len(retrans), interval)
	}
	return c
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func sortedKeys(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- MAC drift

func macDrift(id dev.Identity, os map[string]string) Check {
	c := Check{Name: "mac", Status: OK}
	if id.PermanentMAC == "" {
		c.Status, c.Summary = Skip, "the firmware reports no permanent MAC"
		return c
	}
	if len(os) == 0 {
		c.Status, c.Summary = Skip, "no network interface of this function is known"
		return c
	}
	for _, nd := range sortedStrKeys(os) {
		if !strings.EqualFold(os[nd], id.PermanentMAC) {
			c.Status = Warn
			c.Details = append(c.Details, fmt.Sprintf("%s uses %s; the firmware's permanent MAC is %s", nd, os[nd], id.PermanentMAC))
		}
	}
	if c.Status == OK {
		c.Summary = "the OS uses the permanent MAC " + id.PermanentMAC
	} else {
		c.Summary = "MAC drift: the OS address differs from the permanent one"
		c.Next = "an administrator or a tool set the address (ip link set ... address); inventories keyed on the burnt-in MAC will not find this host; check 'ethtool -P IFACE'"
	}
	return c
}

func sortedStrKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
