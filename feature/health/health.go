// Package health is the first look at a suspicious adapter: identity,
// access, ports, modules, temperatures, configuration, counters, the
// port's link, the PCIe link to the host, the kernel driver's own health
// (devlink health reporters, driver statistics) and MAC drift, each with
// a verdict (ok, warn, fail), what it means and what to do.
package health

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/feature/roce"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// Status is a check's verdict.
type Status string

// Verdicts, in rising order.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skipped"
	// Info is a finding with a next step that is no problem (an empty cage
	// on a port nobody declared unused): it does not change the exit code.
	Info Status = "info"
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
	Device  string      `json:"device"`
	BDF     string      `json:"bdf"`
	Backend dev.Backend `json:"backend"`
	// Via is the path registers took when it is not the backend's own
	// ("fwctl": kernel lockdown, or --via fwctl on the emulator).
	Via    dev.Backend `json:"via,omitempty"`
	Status Status      `json:"status"`
	Checks []Check     `json:"checks"`
	// Error says why the device could not be read at all (its identity),
	// for a reason other than the register database: a device error for
	// the command (exit 3, the exit-code rule in README.md), not a
	// finding.
	Error string `json:"error,omitempty"`
	// Unread is why the identity could not be read, the register
	// database included (then the command exits 2).
	Unread error `json:"-"`
}

// Options tune Run.
type Options struct {
	// Interval is the time between the two samples of counters and module
	// monitors (on the adapter's clock); 0 is one second.
	Interval time.Duration
	// NV is the parameter database for the configuration check; nil
	// skips it.
	NV *nvconf.DB
	// FirstRead, when positive, bounds the first read (the identity)
	// below ctx's deadline: the command's --timeout, while ctx also
	// allows the one Interval the checks wait. A device that does not
	// answer then ends at --timeout, never waiting an interval.
	FirstRead time.Duration
	// Unused are local port numbers left unused on purpose (--unused-ports,
	// the unused-ports files): their state, module and link are not
	// judged.
	Unused []int
}

// Run performs every check on one adapter. A check the backend cannot
// serve says so and is skipped; only the identity read is essential.
func Run(ctx context.Context, a *adapter.Adapter, o Options) *Report {
	r := &Report{Device: a.Name(), BDF: a.BDF(), Backend: a.Backend()}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	ictx := ctx
	if o.FirstRead > 0 {
		var cancel context.CancelFunc
		ictx, cancel = context.WithTimeout(ctx, o.FirstRead)
		defer cancel()
	}
	id, idCheck, idErr := identity(ictx, a)
	r.add(idCheck)
	acc := access(a)
	if idCheck.Status == Fail && !prm.IsDatabaseProblem(idErr) && !errors.Is(idErr, prm.ErrInput) {
		r.Error = idErr.Error()
		if _, answered := dev.StatusOf(idErr); !answered {
			// Nothing answered (a held semaphore, a removed device): the
			// path to the device is what failed, never "access ok" beside
			// it. A firmware that refused MGIR or stayed busy did answer.
			acc.Status = Fail
			acc.Summary += "; the device did not answer (see identity)"
			acc.Next = "make sure no other tool holds the adapter (mstflint, mstreg, mstconfig) and that it is still there ('cxray status', dmesg); then run health again"
		}
	}
	r.add(acc)
	if idCheck.Status == Fail {
		r.Unread = idErr
		r.finish()
		return r
	}
	pcieBefore, _ := a.PCIe(ctx)
	drvBefore, drvErr := a.Driver(ctx, true)
	before, errA := counters(ctx, a)
	// The module check reads twice around the same interval the counters
	// use, so frozen monitors show without a second wait.
	mods, modErr := modules.Read(ctx, a, modules.Options{Verify: true, Interval: o.Interval})
	if modErr != nil && errA == nil {
		errA = a.Sleep(ctx, o.Interval)
	}
	after, errB := counters(ctx, a)
	pcieAfter, _ := a.PCIe(ctx)
	var drvAfter *adapter.Driver
	if drvErr == nil {
		drvAfter, _ = a.Driver(ctx, false)
	}
	// The ports check comes first in the report; it is made after the
	// module read so that a port down for want of a module says so.
	pc := newPortClass(mods, o.Unused)
	// PAOS and PTYS are read once, for the ports, link and PCIe checks.
	lk := &link.Links{}
	lk.Links, lk.Registers, lk.Err = a.LinkReadings(ctx)
	r.add(portsCheck(ctx, a, pc, lk))
	r.add(modulesCheck(mods, modErr, pc))
	r.add(temperatures(ctx, a, unreachableModules(mods)))
	r.add(configuration(ctx, a, o.NV))
	r.add(countersCheck(before, after, errA, errB, o.Interval))
	var ppcnt map[adapter.CounterKey]*prm.Decoded
	if after != nil {
		ppcnt = after.ppcnt
	}
	r.add(linkCheck(ctx, a, pc, lk, ppcnt))
	pcc, prep := pcieCheck(pcielink.Info{Device: a.Name(), BDF: a.BDF(), Backend: string(a.Backend()), PortGbps: pcielink.NeedOf(lk.Links)},
		pcieBefore, pcieAfter, o.Interval)
	r.add(pcc)
	dc, drv := driverCheck(drvBefore, drvAfter, drvErr, o.Interval)
	r.add(dc)
	r.add(bandwidthCheck(prep, drv, before, after, o.Interval))
	r.add(macDrift(ctx, a, id))
	if c, ok := kernelLog(ctx, a); ok {
		r.add(c)
	}
	r.Via = via(a)
	r.finish()
	return r
}

// unreadable is the line of a check whose reads failed: a database that
// does not match the firmware is named as such, with what to do, never
// blamed on the device.
func unreadable(c Check, what string, err error) Check {
	c.Status = Warn
	if prm.IsDatabaseProblem(err) {
		c.Summary = fmt.Sprintf("%s could not be read with this register database (database: %v)", what, err)
		c.Next = "the register database does not match what the firmware answers: use one that matches it (--adb with NVIDIA MFT's newest, or --adb builtin); 'cxray prm diff' shows what changed"
		return c
	}
	c.Summary = fmt.Sprintf("%s could not be read: %v", what, err)
	return c
}

// unsupported is the line of a check the backend cannot serve. An
// adapter.UnsupportedError names the backend itself ("... is not
// available on the kernel backend: why"): no prefix to say it twice.
func unsupported(c Check, err error) Check {
	c.Status, c.Summary = Skip, "not available on this backend: "+err.Error()
	var ue *adapter.UnsupportedError
	if errors.As(err, &ue) {
		c.Summary = err.Error()
	}
	return c
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

// ---- identity

// identity reads and judges the identity; the error is set when nothing
// could be read.
func identity(ctx context.Context, a *adapter.Adapter) (*adapter.Identity, Check, error) {
	c := Check{Name: "identity"}
	id, err := a.Identity(ctx)
	if id == nil {
		if err == nil {
			err = errors.New("the backend returned no identity")
		}
		c.Status, c.Summary = Fail, "cannot read the firmware's identity: "+err.Error()
		c.Next = "check the device name with 'cxray status' and that no other tool holds the adapter; the other checks were not run"
		return &adapter.Identity{}, c, err
	}
	c.Status = OK
	db := a.DB()
	c.Summary = fmt.Sprintf("firmware %s, PSID %s", dash(id.Firmware), dash(id.PSID))
	if a.HasRegisters() {
		c.Summary += ", PRM database " + db.Revision
	}
	if err != nil {
		c.Details = append(c.Details, "partly read: "+err.Error())
	}
	if id.FirmwarePending != "" {
		c.Status = Warn
		c.Summary += fmt.Sprintf("; firmware %s is written and waits for a firmware reset", id.FirmwarePending)
		c.Next = "activate it with a firmware reset (mlxfwreset, or a cold reboot), or it runs at the next one unplanned"
	}
	if !a.HasRegisters() {
		return id, c, nil
	}
	revDate, known := RevisionDate(db.Revision)
	switch {
	case id.FirmwareBuilt.IsZero() || !known:
		c.Details = append(c.Details, "the firmware build date or the database revision date is unknown; cannot compare their ages")
	case id.FirmwareBuilt.Sub(revDate) > MaxDatabaseLag:
		c.Status = Warn
		c.Summary += "; " + DatabaseLag(id.FirmwareBuilt, db.Revision)
		c.Details = append(c.Details, renamesSince(db.Revision)...)
		if c.Next == "" {
			c.Next = "fields may have been renamed, moved or added since; use the newest ADB you have (--adb, e.g. NVIDIA MFT's) and see what changed with 'cxray prm diff OLD.adb NEW.adb REG'"
		}
	default:
		c.Details = append(c.Details, fmt.Sprintf("firmware built %s, database revision of %s", id.FirmwareBuilt.Format("2006-01-02"), revDate.Format("2006-01")))
	}
	// What the database could not say for itself and was completed from
	// the built-in one (prm.DB.AdoptSelectors): a database matter.
	for _, n := range db.Notes {
		c.Details = append(c.Details, "database: "+n)
	}
	return id, c, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MaxDatabaseLag is how much newer than the PRM database the firmware may
// be before the identity check warns: PRM revisions come about twice a
// year, and firmware of a branch keeps its registers compatible; two years
// apart, fields are likely to differ.
const MaxDatabaseLag = 2 * 365 * 24 * time.Hour

// DatabaseLag says the PRM database is older than the firmware by more than
// MaxDatabaseLag ("the database (Rev 0.51, 2020-05) is older than the
// firmware (built 2023-10-05) by 40 months"), or "" when it is not, or
// when either date is unknown. health's identity check and status both
// say it.
func DatabaseLag(built time.Time, revision string) string {
	revDate, known := RevisionDate(revision)
	if built.IsZero() || !known || built.Sub(revDate) <= MaxDatabaseLag {
		return ""
	}
	return fmt.Sprintf("the database (%s, %s) is older than the firmware (built %s) by %s", revision,
		revDate.Format("2006-01"), built.Format("2006-01-02"), monthsText(built.Sub(revDate)))
}

func monthsText(d time.Duration) string {
	return fmt.Sprintf("%d months", int(d.Hours()/24/30.4))
}

// ---- access

// via is the register path when it differs from the backend.
func via(a *adapter.Adapter) dev.Backend {
	if p := a.Path(); p != "" && p != a.Backend() {
		return p
	}
	return ""
}

func access(a *adapter.Adapter) Check {
	c := Check{Name: "access", Status: OK}
	switch a.Backend() {
	case dev.BackendDirect:
		c.Summary = "direct access through the PCI config-space gateway: every register is readable"
	case dev.BackendEmulator:
		c.Summary = "the built-in emulator (same protocol as hardware)"
	case dev.BackendFwctl:
		c.Summary = "the kernel's fwctl device: registers and read-only commands through the driver"
	case dev.BackendKernel:
		c.Status = Warn
		c.Summary = "the read-only kernel backend: no registers, so ports, modules and counters come from sysfs and netlink only"
		c.Next = "run as root with the PCI address (-d 0000:03:00.0) for register-level checks; if root fails with 'lockdown', Secure Boot blocks config-space writes"
	default:
		c.Summary = string(a.Backend())
	}
	if a.Backend() != dev.BackendFwctl && a.Path() == dev.BackendFwctl {
		c.Summary += ", through the fwctl command interface"
		for _, n := range a.Notes() {
			if strings.HasPrefix(n, "kernel lockdown") {
				c.Summary, _, _ = strings.Cut(n, " (")
				c.Summary += ": registers and read-only commands through the driver"
			}
		}
	}
	c.Details = append(c.Details, a.Notes()...)
	return c
}

// ---- ports

// portClass is what health knows of a port beyond its link: declared
// unused, or an empty cage (the module read found no module).
type portClass struct {
	unused map[int]bool
	empty  map[int]bool
}

func newPortClass(mods []*modules.Report, unused []int) portClass {
	pc := portClass{unused: map[int]bool{}, empty: map[int]bool{}}
	for _, p := range unused {
		pc.unused[p] = true
	}
	for _, m := range mods {
		for _, v := range m.Verdicts {
			if v.Code == optics.VerdictNoModule {
				pc.empty[m.Port] = true
			}
		}
	}
	return pc
}

// emptyNext is the next step for empty cages on ports nobody declared
// unused: plug a module, or say the port is unused (docs/health.md).
func emptyNext(bdf string, ports []int) string {
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = fmt.Sprint(p)
	}
	l := strings.Join(list, ",")
	if bdf == "" {
		bdf = "*"
	}
	return fmt.Sprintf("plug a module or cable into port %s if it should carry traffic; if it is unused on purpose, say so and health stops reporting it: 'cxray health --unused-ports %s', or a line '%s %s' in %s (docs/health.md)", l, l, bdf, l, UnusedPortsFile)
}

func portsCheck(ctx context.Context, a *adapter.Adapter, pc portClass, lk *link.Links) Check {
	c := Check{Name: "ports", Status: OK}
	links, err := lk.Links, lk.Err
	if len(links) == 0 {
		if errors.Is(err, errors.ErrUnsupported) {
			return unsupported(c, err)
		}
		c = unreadable(c, "the ports", err)
		if c.Next == "" {
			c.Next = "run 'cxray status' and 'cxray reg get PAOS' for details"
		}
		return c
	}
	if err != nil {
		c.Status = Warn
		c.Details = append(c.Details, "partly read: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	lanes := map[int]int{}
	if ps, err := a.Ports(ctx); err == nil {
		for _, p := range ps {
			lanes[p.Local] = p.Lanes
		}
	}
	// parts are the ports in order, each as it stands: up, disabled,
	// empty, unused.
	var parts []string
	var empty []int
	up, unknown := 0, 0
	judged := 0
	for _, l := range links {
		if pc.unused[l.Port] {
			// Declared unused: shown, never judged.
			parts = append(parts, fmt.Sprintf("port %d unused", l.Port))
			c.Details = append(c.Details, fmt.Sprintf("port %d is declared unused (--unused-ports or %s): not judged", l.Port, UnusedPortsFile))
			continue
		}
		judged++
		switch {
		case l.OperUp == nil:
			c.Status = worse(c.Status, Warn)
			c.Details = append(c.Details, fmt.Sprintf("port %d: its state could not be read", l.Port))
			unknown++
			parts = append(parts, fmt.Sprintf("port %d state unknown", l.Port))
			if c.Next == "" {
				c.Next = fmt.Sprintf("the firmware did not give the port's state: see why with 'cxray reg get PAOS --index local_port=%d'", l.Port)
			}
			continue
		case !*l.OperUp && l.AdminUp != nil && !*l.AdminUp:
			// Disabled on purpose is not a problem, but it is shown: a
			// summary that lists only the ports that are up hides it.
			parts = append(parts, fmt.Sprintf("port %d disabled", l.Port))
			c.Details = append(c.Details, fmt.Sprintf("port %d is disabled (admin_status %s)", l.Port, l.AdminStatus))
			continue
		case !*l.OperUp && pc.empty[l.Port]:
			// Down because nothing is plugged: information with the
			// next step, not a hardware failure.
			parts = append(parts, fmt.Sprintf("port %d empty cage", l.Port))
			empty = append(empty, l.Port)
			c.Details = append(c.Details, fmt.Sprintf("port %d is down: its cage holds no module", l.Port))
			continue
		case !*l.OperUp:
			c.Status = Fail
			parts = append(parts, fmt.Sprintf("port %d %s", l.Port, orWord(l.OperStatus, "down")))
			c.Details = append(c.Details, fmt.Sprintf("port %d is %s while enabled", l.Port, orWord(l.OperStatus, "down")))
			c.Next = "check the module and cable of the port ('cxray module --port N'), the link partner, and PDDR's troubleshooting page ('cxray reg get PDDR --index page_select=1,local_port=N')"
			continue
		}
		up++
		if l.LinkLayer == adapter.LinkInfiniBand {
			s, st, detail, next := ibPort(l, lanes[l.Port])
			parts = append(parts, s)
			c.Status = worse(c.Status, st)
			if detail != "" {
				c.Details = append(c.Details, detail)
			}
			if c.Next == "" {
				c.Next = next
			}
			continue
		}
		if l.SpeedGbps == nil || *l.SpeedGbps == 0 {
			parts = append(parts, fmt.Sprintf("port %d up", l.Port))
			continue
		}
		parts = append(parts, fmt.Sprintf("port %d up at %gG", l.Port, *l.SpeedGbps))
		if l.MaxSpeedGbps != nil && *l.SpeedGbps < *l.MaxSpeedGbps {
			c.Status = worse(c.Status, Warn)
			c.Details = append(c.Details, fmt.Sprintf("port %d runs at %gG, below the port's %gG", l.Port, *l.SpeedGbps, *l.MaxSpeedGbps))
			if c.Next == "" {
				c.Next = "a slower link usually means a slower module or cable, or a partner that advertises less: compare 'cxray module --port N' and PTYS's eth_proto_lp_advertise"
			}
		}
	}
	// A port whose state could not be read is not a port that is down.
	c.Summary = strings.Join(parts, ", ")
	if len(empty) > 0 {
		if c.Status == OK {
			c.Status = Info
		}
		if c.Next == "" {
			c.Next = emptyNext(a.BDF(), empty)
		}
	}
	if up == 0 && unknown == 0 && judged > len(empty) {
		// No port up is never a pass: disabled on purpose is still worth
		// a look, and a failure above already says more. Ports declared
		// unused or with an empty cage are not counted.
		if c.Summary == "" {
			c.Summary = "no port is up"
		} else {
			c.Summary = "no port is up: " + c.Summary
		}
		c.Status = worse(c.Status, Warn)
		if c.Next == "" || c.Status == Warn && len(empty) > 0 {
			c.Next = "every port of this function is administratively down; bring it up with 'cxray reg set PAOS admin_status=up ase=1' or 'ip link set IFACE up' if that is not intended"
		}
	}
	return c
}

func worse(a, b Status) Status {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ---- modules

func modulesCheck(mods []*modules.Report, err error, pc portClass) Check {
	c := Check{Name: "modules", Status: OK}
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return unsupported(c, err)
	case err != nil:
		c.Status, c.Summary = Warn, "modules could not be read: "+err.Error()
		c.Next = "run 'cxray module --all' for details"
		return c
	}
	n, judged := 0, 0
	var empty []int
	for _, m := range mods {
		if pc.unused[m.Port] {
			c.Details = append(c.Details, fmt.Sprintf("port %d: declared unused, not judged", m.Port))
			continue
		}
		judged++
		for _, v := range m.Verdicts {
			if v.Code == optics.VerdictNoModule {
				// An empty cage is information (the ports check gives the
				// next step), not a hardware problem.
				empty = append(empty, m.Port)
				c.Details = append(c.Details, fmt.Sprintf("port %d: no module in the cage", m.Port))
				continue
			}
			n++
			st := Warn
			switch v.Code {
			case optics.VerdictI2CHang, optics.VerdictFrozen, optics.VerdictThresholdAlarm, optics.VerdictChecksum,
				optics.VerdictUnsupported, optics.VerdictModuleError:
				st = Fail
			}
			if st.rank() > c.Status.rank() {
				c.Status = st
				c.Next = v.NextStep
			}
			c.Details = append(c.Details, fmt.Sprintf("port %d: %s (%s): %s", m.Port, v.Code, v.Category, v.Summary))
		}
	}
	for _, m := range mods {
		if m.Verify != nil && m.Verify.DeviceClockStill {
			c.Details = append(c.Details, "the device's clock did not move between the two reads (its uptime stood still: an emulator on a manual clock), so frozen monitors could not be judged; advance it (cxray emu ctl advance 10s) or use -d emu, whose waits move it")
			break
		}
	}
	if n == 0 {
		c.Summary = fmt.Sprintf("%d module(s) read, no problem found", judged-len(empty))
	} else {
		c.Summary = fmt.Sprintf("%d problem(s) on %d module(s)", n, judged-len(empty))
	}
	if len(empty) > 0 {
		// Shown, not judged: the ports check gives the next step.
		c.Summary += fmt.Sprintf("; %d empty cage(s)", len(empty))
	}
	return c
}

// unreachableModules are the modules whose management interface the
// module check found dead (a stuck bus; a module that answers nothing), by
// cage, with the verdict: the firmware reads a module's temperature over
// that interface, so a temperature said of them would contradict the
// verdict, whatever a sensor answers. (An EEPROM the firmware will not
// read, MCIA refused, says nothing about the sensor.)
func unreachableModules(mods []*modules.Report) map[int]string {
	out := map[int]string{}
	for _, m := range mods {
		for _, v := range m.Verdicts {
			if v.Code == optics.VerdictI2CHang || v.Code == optics.VerdictBlank {
				if _, seen := out[m.Module]; !seen {
					out[m.Module] = v.Code
				}
			}
		}
	}
	return out
}

// ---- temperatures

func temperatures(ctx context.Context, a *adapter.Adapter, unreachable map[int]string) Check {
	c := Check{Name: "temperatures", Status: OK}
	ts, err := a.Temperatures(ctx)
	if len(ts) == 0 && errors.Is(err, errors.ErrUnsupported) {
		return unsupported(c, err)
	}
	var parts []string
	for _, t := range ts {
		label := "ASIC"
		if t.Kind == "module" {
			label = fmt.Sprintf("module %d", t.Module)
		} else if t.Index > 0 {
			label = t.Sensor
		}
		if why, ok := unreachable[t.Module]; ok && t.Kind == "module" {
			// The module check could not read this module: its sensor's
			// answer, if any, is not a reading of it.
			parts = append(parts, label+" n/a")
			c.Details = append(c.Details, fmt.Sprintf("%s: no reading (the module is unreadable: %s; see the modules check)", label, why))
			continue
		}
		if t.Celsius == nil {
			parts = append(parts, label+" n/a")
			c.Details = append(c.Details, fmt.Sprintf("%s: no reading (%s)", label, orWord(t.Invalid, "not given")))
			continue
		}
		tc := *t.Celsius
		parts = append(parts, fmt.Sprintf("%s %.1f °C", label, tc))
		if t.High == nil {
			continue
		}
		hc := *t.High
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
	if err != nil {
		c.Details = append(c.Details, "partly read: "+err.Error())
	}
	c.Summary = strings.Join(parts, ", ")
	if c.Summary == "" {
		c.Status, c.Summary = Skip, "no temperature sensor answered"
		if err != nil {
			c = unreadable(c, "the temperatures", err)
		}
	}
	return c
}

// ---- configuration

func configuration(ctx context.Context, a *adapter.Adapter, nv *nvconf.DB) Check {
	c := Check{Name: "configuration", Status: OK}
	d, err := a.Registers(ctx)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			c.Status, c.Summary = Skip, "not available on this backend: NV configuration is read through registers"
			return c
		}
		c.Status, c.Summary = Warn, "NV configuration could not be read: "+err.Error()
		return c
	}
	if nv == nil {
		c.Status, c.Summary = Skip, "no NV parameter database was given"
		return c
	}
	// A write the journal shows was cut short comes first: until it is
	// finished or rolled back, cxray refuses every NV write, so 'config
	// set' is no advice then.
	lctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	ie, lerr := nvconf.CheckInterrupted(lctx, nvconf.KeyFor(a.Backend(), a.Name(), a.BDF()), nv)
	cancel()
	var le *nvconf.LockError
	switch {
	case ie != nil:
		c.Status = Fail
		c.Details = append(c.Details, ie.Error())
		c.Next = fmt.Sprintf("finish the interrupted %s with 'cxray config recover --finish -d %s' or roll it back with 'cxray config recover --rollback -d %s'; until then cxray refuses NV writes to this adapter",
			ie.Entry.Op, a.Name(), a.Name())
	case errors.As(lerr, &le):
		c.Details = append(c.Details, "an NV write is under way: "+lerr.Error())
	}
	ports := 0
	if id, err := a.Identity(ctx); err == nil {
		ports = id.Ports // read with the identity: nvconf need not read MGIR again
	}
	pending, suspicious, err := nvFindings(ctx, d, nv, ports)
	if err != nil {
		st, next, details := c.Status, c.Next, c.Details
		c = unreadable(c, "the NV configuration", err)
		if st == Fail {
			c.Status, c.Next, c.Details = st, next, details
		}
		if c.Next == "" {
			c.Next = "run 'cxray config query -e' for details"
		}
		return c
	}
	if len(pending) > 0 {
		c.Status = worse(c.Status, Warn)
		c.Details = append(c.Details, pending...)
		if ie == nil {
			c.Next = "these take effect after a firmware reset: apply with 'cxray config apply' (MFRL) where the firmware allows, or reboot; or undo them with 'cxray config set'"
		}
	}
	if len(suspicious) > 0 {
		c.Status = worse(c.Status, Warn)
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
	if ie != nil {
		c.Summary = fmt.Sprintf("an interrupted NV %s left %d TLV(s) possibly half applied; ", ie.Entry.Op, len(ie.Names)) + c.Summary
	}
	return c
}

// NVFindings reads the NV configuration and lists the parameters whose
// Next Boot differs from Current ("NAME: X now, Y after the next
// firmware reset") and suspicious combinations.
func NVFindings(ctx context.Context, d *dev.Device, nv *nvconf.DB) (pending, suspicious []string, err error) {
	return nvFindings(ctx, d, nv, 0)
}

// nvFindings is NVFindings on an adapter of the given port count (0:
// read it from MGIR).
func nvFindings(ctx context.Context, d *dev.Device, nv *nvconf.DB, ports int) (pending, suspicious []string, err error) {
	s, err := nvconf.OpenPorts(ctx, d, nv, ports)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		return nil, nil, err
	}
	val := map[string]string{}
	for _, st := range res.Settings {
		if st.Next != nil {
			val[st.Name] = st.Next.Text
		}
		if st.Pending && st.Current != nil && st.Next != nil {
			pending = append(pending, fmt.Sprintf("%s: %s now, %s after the next firmware reset", st.Name, st.Current.Text, st.Next.Text))
		}
	}
	on := func(name string) bool { return strings.HasPrefix(val[name], "True") }
	if on("SRIOV_EN") && strings.HasPrefix(val["NUM_OF_VFS"], "0") {
		suspicious = append(suspicious, "SR-IOV is enabled (SRIOV_EN) with NUM_OF_VFS=0: no virtual function can be created")
	}
	if strings.HasPrefix(val["ROCE_CONTROL"], "ROCE_DISABLE") {
		suspicious = append(suspicious, "RoCE is disabled (ROCE_CONTROL=ROCE_DISABLE): RDMA over Ethernet will not work")
	}
	return pending, suspicious, nil
}

// ---- counters

// sample is one read of the error counters of every port.
type sample struct {
	values map[string]uint64 // "port1.symbol_errors"
	rdma   map[string]uint64
	pause  map[string]uint64 // "port1.a_pause_mac_ctrl_frames_received"
	// ppcnt are the PPCNT readings, which the link check decodes further
	// rather than reading them again.
	ppcnt map[adapter.CounterKey]*prm.Decoded
}

// pauseCounters are the PPCNT IEEE 802.3 group's pause frame counters:
// flow control, not errors; the bandwidth check weighs them.
var pauseCounters = []string{"a_pause_mac_ctrl_frames_received", "a_pause_mac_ctrl_frames_transmitted"}

// errorCounters are counters that stay at zero on a healthy link: PPCNT's
// by group, and the IB PMA counters the kernel shows;
// rs_fec_uncorrectable_blocks fails, the others warn.
var errorCounters = map[string][]string{
	"0":  {"a_frame_check_sequence_errors", "a_symbol_error_during_carrier", "a_alignment_errors"},
	"1":  {"if_in_errors", "if_out_errors", "if_in_discards"},
	"18": {"symbol_errors", "sync_headers_errors", "rs_fec_uncorrectable_blocks"},
	"ib": {"symbol_error", "port_rcv_errors", "link_error_recovery", "link_downed", "local_link_integrity_errors", "excessive_buffer_overrun_errors"},
}

func counters(ctx context.Context, a *adapter.Adapter) (*sample, error) {
	s := &sample{values: map[string]uint64{}, rdma: map[string]uint64{}, pause: map[string]uint64{}}
	sets, ppcnt, err := a.PortCounterReadings(ctx)
	if err != nil && len(sets) == 0 {
		return nil, err
	}
	s.ppcnt = ppcnt
	want := map[string]bool{}
	for _, names := range errorCounters {
		for _, n := range names {
			want[n] = true
		}
	}
	ib := map[int]bool{}
	for _, cs := range sets {
		ib[cs.Port] = ib[cs.Port] || cs.Kind == "ib"
	}
	for _, cs := range sets {
		for n, v := range cs.Values {
			// On an InfiniBand port the IB symbol_error counts what the
			// physical layer's symbol_errors does: one is enough.
			if want[n] && !(ib[cs.Port] && cs.Kind == "ppcnt" && n == "symbol_errors") {
				s.values[fmt.Sprintf("port%d.%s", cs.Port, n)] = v
			}
		}
		for _, n := range pauseCounters {
			if v, ok := cs.Values[n]; ok {
				s.pause[fmt.Sprintf("port%d.%s", cs.Port, n)] = v
			}
		}
	}
	if rs, rerr := a.RDMACounters(ctx); rerr == nil || len(rs) > 0 {
		for _, cs := range rs {
			for _, n := range roce.RetransmissionCounters {
				if v, ok := cs.Values[n]; ok {
					s.rdma[fmt.Sprintf("port%d.%s", cs.Port, n)] = v
				}
			}
		}
	}
	return s, nil
}

func countersCheck(a, b *sample, errA, errB error, interval time.Duration) Check {
	c := Check{Name: "counters", Status: OK}
	if errA != nil || errB != nil || a == nil || b == nil {
		err := firstErr(errA, errB)
		if errors.Is(err, errors.ErrUnsupported) {
			return unsupported(c, err)
		}
		return unreadable(c, "the counters (sampled twice)", err)
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
		// The alert names the first counter that moved (port1.symbol_error
		// on an InfiniBand port: "rate(symbol_error) > 0").
		name := "symbol_errors"
		if _, n, ok := strings.Cut(strings.Fields(moving[0])[0], "."); ok {
			name = n
		}
		c.Next = fmt.Sprintf("errors on a link point at the module, cable or connector: clean or reseat them, compare with 'cxray module --verify', and watch with 'cxray monitor --what counters --alert \"rate(%s) > 0\"'", name)
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

func macDrift(ctx context.Context, a *adapter.Adapter, id *adapter.Identity) Check {
	c := Check{Name: "mac", Status: OK}
	os, err := a.OS(ctx)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			c.Status, c.Summary = Skip, "no network interface of this function is known"
			return c
		}
		c.Status, c.Summary = Warn, "the interfaces could not be read: "+err.Error()
		return c
	}
	if ipoibOnly(os.Netdevs) {
		c.Status, c.Summary = Skip, "the port runs InfiniBand: its interface is IPoIB, whose address is a queue pair and the port's GID, not a MAC"
		return c
	}
	drift := Drift(id.PermanentMAC, os.Netdevs)
	switch {
	case id.PermanentMAC == "" && len(drift) == 0:
		c.Status, c.Summary = Skip, "the permanent MAC is not known"
		return c
	case len(os.Netdevs) == 0:
		c.Status, c.Summary = Skip, "no network interface of this function is known"
		return c
	}
	for _, d := range drift {
		c.Status = Warn
		c.Details = append(c.Details, fmt.Sprintf("%s uses %s; the permanent MAC is %s", d.Netdev, d.Address, d.Permanent))
	}
	if c.Status == OK {
		c.Summary = "the OS uses the permanent MAC " + id.PermanentMAC
	} else {
		c.Summary = "MAC drift: the OS address differs from the permanent one"
		c.Next = "an administrator or a tool set the address (ip link set ... address); inventories keyed on the burnt-in MAC will not find this host; check 'ethtool -P IFACE'"
	}
	return c
}

// MACDrift is an interface whose address is not its permanent one.
type MACDrift struct {
	Netdev    string `json:"netdev"`
	Address   string `json:"address"`
	Permanent string `json:"permanent"`
}

// Drift lists the interfaces whose current address differs from the
// permanent MAC: the firmware's (permanent) when known, else the one the
// kernel reports for the interface. Representors are left out: they
// carry addresses of their own; so are IPoIB interfaces, whose 20-byte
// address is a QPN and the port's GID, not a MAC.
func Drift(permanent string, nds []adapter.Netdev) []MACDrift {
	var out []MACDrift
	for _, n := range nds {
		if n.Representor || n.Address == "" || len(n.Address) != len("00:00:00:00:00:00") {
			continue
		}
		want := permanent
		if want == "" {
			want = n.PermanentAddress
		}
		if want != "" && !strings.EqualFold(n.Address, want) {
			out = append(out, MACDrift{Netdev: n.Name, Address: n.Address, Permanent: want})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Netdev < out[j].Netdev })
	return out
}
