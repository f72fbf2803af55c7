package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// ---- command failures (drivers/net/ethernet/mellanox/mlx5/core/cmd.c) ----

var (
	// NAME(0xOP) op_mod(0xM) [uid(U)] failed, status TEXT(0xS), syndrome (0xY)[, err(E)]
	cmdFailRE    = lazyre.New(`(?i)([A-Za-z_][\w ]*?)\(0x([0-9a-f]+)\) op_mod\(0x([0-9a-f]+)\)(?: uid\((\d+)\))? failed, status ([^(]*)\(0x([0-9a-f]+)\), syndrome \(0x([0-9a-f]+)\)(?:, err\((-?\d+)\))?`)
	cmdTimeoutRE = lazyre.New(`(?i)(?:cmd\[\d+\]: )?(\w+)\(0x([0-9a-f]+)\)(?: Async,)? timeout|(\w+)\(0x([0-9a-f]+)\) timed out while waiting for a slot|(\w+)\(0x([0-9a-f]+)\) canceled on out of queue timeout`)
)

// statusInfo: the command status values (include/linux/mlx5/device.h
// MLX5_CMD_STAT_*, the text cmd.c prints), who acts, and the usual suspects.
var statusInfo = map[uint64]struct{ text, category, suspects string }{
	0x1:  {"internal error", CatFirmware, "the firmware failed the command itself; check the health buffer (devlink health diagnose pci/BDF reporter fw) and the firmware version"},
	0x2:  {"bad operation", CatSoftware, "the opcode or op_mod: a command this firmware does not support (check the capability bits, or update the firmware)"},
	0x3:  {"bad parameter", CatSoftware, "a field of the input mailbox is out of range or inconsistent"},
	0x4:  {"bad system state", CatFirmware, "the device is not in a state to run commands (during reset, after a fatal error)"},
	0x5:  {"bad resource", CatSoftware, "an object number in the input (QPN, CQN, PD, MKEY, UAR) does not exist or belongs to another user"},
	0x6:  {"resource busy", CatSoftware, "the object is in use (destroying a CQ that a QP still uses, an EQ with CQs)"},
	0x7:  {"FW not ready", CatFirmware, "the firmware is still initialising"},
	0x8:  {"limits exceeded", CatConfig, "a size or count beyond the device's maximum (log_max_* capabilities), or too many objects"},
	0x9:  {"bad resource state", CatSoftware, "the object's state does not allow this (a QP transition from the wrong state)"},
	0xa:  {"bad index", CatSoftware, "an index field (a port, a vport, a function) names nothing"},
	0xf:  {"no resources", CatConfig, "the device ran out of a resource (ICM pages, UARs, objects); fewer VFs or queues, or more memory for the firmware"},
	0x10: {"bad QP state", CatSoftware, "the QP's current state does not allow the transition"},
	0x30: {"bad packet (discarded)", CatSoftware, "a packet the command carried was malformed"},
	0x40: {"bad size too many outstanding CQEs", CatSoftware, "the CQ is smaller than the CQEs still outstanding on it (resize or destroy)"},
	0x50: {"bad input length", CatSoftware, "the input mailbox length: a driver/firmware mismatch"},
	0x51: {"bad output length", CatSoftware, "the output mailbox length: a driver/firmware mismatch"},
	0xfe: {"aborted (driver)", CatHardware, "the driver faked this answer: the device is already in internal-error state or gone from PCI"},
}

// commandPurpose says what common commands do and which fields to check.
var commandPurpose = map[string][2]string{
	"CREATE_MKEY":              {"registers memory (a memory key)", "the mkey context: access_mode, log_page_size, len, start_addr, pd, the translation entries"},
	"CREATE_QP":                {"creates a queue pair", "the QPC: pd, cqn_snd/cqn_rcv, log_sq_size/log_rq_size, uar_page, the QP type and service"},
	"RST2INIT_QP":              {"moves a QP from RESET to INIT", "pkey_index, the port (vhca_port_num), the access flags"},
	"INIT2RTR_QP":              {"moves a QP to ready-to-receive: the path to the peer", "primary_address_path (rgid_rip, grh, dlid, sl, mtu, src_addr_index / GID index), remote_qpn, next_rcv_psn, min_rnr_nak"},
	"RTR2RTS_QP":               {"moves a QP to ready-to-send", "retry_count, rnr_retry, log_ack_req_freq, next_send_psn, primary_address_path.ack_timeout"},
	"RTS2RTS_QP":               {"modifies an RTS QP", "the fields changed (alternate path, timeouts)"},
	"CREATE_CQ":                {"creates a completion queue", "log_cq_size (against log_max_cq_sz), c_eqn, uar_page, cqe_sz"},
	"CREATE_EQ":                {"creates an event queue", "log_eq_size, uar_page, the event bitmask"},
	"ACCESS_REG":               {"reads or writes a device register", "register_id (a register this firmware does not have?) and the register's index fields"},
	"ENABLE_HCA":               {"enables the function at probe", "the function_id; the firmware may not be ready or the function not enabled"},
	"QUERY_HCA_CAP":            {"reads a capability page", "op_mod (the capability type): a type this firmware does not have"},
	"SET_HCA_CAP":              {"sets capabilities at probe", "the capability fields the driver writes"},
	"MODIFY_NIC_VPORT_CONTEXT": {"changes a vport's context (MAC, MTU, promiscuous)", "field_select and the vport number"},
	"CREATE_FLOW_TABLE":        {"creates a steering table", "the table type, level and log_size"},
	"DESTROY_QP":               {"destroys a queue pair", "the QPN"},
	"MANAGE_PAGES":             {"gives pages to the firmware", "the page count; the host may be out of memory"},
	"CREATE_TIR":               {"creates a receive transport object", "the RQT/RQ numbers, the hash fields"},
	"CREATE_SQ":                {"creates a send queue", "cqn, tis_num, the wq fields"},
	"CREATE_RQ":                {"creates a receive queue", "cqn, the wq fields"},
}

func (r *klogReader) command(ev *Event, msg string) bool {
	if m := cmdFailRE.FindStringSubmatch(msg); m != nil {
		op, opmod, st, synd := hexU(m[2]), hexU(m[3]), hexU(m[6]), hexU(m[7])
		name := strings.ToUpper(strings.TrimSpace(m[1]))
		if r.dbs.Commands != nil {
			if c, ok := r.dbs.Commands.CommandByOpcode(uint16(op)); ok {
				name = c.Name
			}
		}
		ev.Class, ev.Severity = ClassCommand, SevProblem
		ev.Fields = append(ev.Fields, Fact{"command", fmt.Sprintf("%s (opcode 0x%x)", name, op)}, Fact{"op_mod", hx(opmod)})
		stName := strings.TrimSpace(m[5])
		if r.dbs.Commands != nil {
			if n := r.dbs.Commands.StatusName(uint8(st)); n != "" {
				stName = n + " (" + strings.TrimSpace(m[5]) + ")"
			}
		}
		ev.Fields = append(ev.Fields, Fact{"status", fmt.Sprintf("0x%x %s", st, stName)}, Fact{"syndrome", fmt.Sprintf("0x%x", synd)})
		if m[4] != "" {
			ev.Fields = append(ev.Fields, Fact{"uid", m[4]})
		}
		if m[8] != "" {
			ev.Fields = append(ev.Fields, Fact{"errno", m[8]})
		}
		si, ok := statusInfo[st]
		if !ok {
			si = statusInfo[0x1]
			si.text = "unknown status"
		}
		ev.Category = si.category
		what := ""
		if pu, ok := commandPurpose[name]; ok {
			what = " (" + pu[0] + ")"
			if st == 0x3 || st == 0x9 || st == 0x5 || st == 0x8 || st == 0x10 {
				si.suspects += "; for " + name + ": " + pu[1]
			}
		}
		ev.Meaning = fmt.Sprintf("the firmware refused %s%s: status %s; syndrome 0x%x is the firmware's internal reason (no public table: quote it to NVIDIA support as given)", name, what, si.text, synd)
		ev.Next = "check " + si.suspects
		if synd == 0xbadd00de || st == 0xfe {
			ev.Category = CatHardware
			ev.Meaning = fmt.Sprintf("%s failed because the device was already dead: the driver answers every command with syndrome 0xbadd00de once the device is in internal-error state or gone from PCI", name)
			ev.Next = "find the first error before this line (a health report, a PCIe error, a removal); this one is a consequence"
		}
		r.emit(*ev)
		return true
	}
	if m := cmdTimeoutRE.FindStringSubmatch(msg); m != nil {
		name, op := m[1]+m[3]+m[5], m[2]+m[4]+m[6]
		ev.Class, ev.Severity, ev.Category = ClassCommand, SevProblem, CatFirmware
		ev.Fields = append(ev.Fields, Fact{"command", fmt.Sprintf("%s (opcode 0x%s)", name, op)})
		ev.Meaning = fmt.Sprintf("the firmware did not answer %s in time (the driver waits 60 s): the firmware is hung or overloaded", name)
		ev.Next = "check the health reports around this line and devlink health (pci/BDF reporter fw); if the device stopped answering, a firmware reset (mlxfwreset) or a reboot recovers it; update the firmware"
		r.emit(*ev)
		return true
	}
	return false
}

// ---- error CQEs (struct mlx5_err_cqe, include/linux/mlx5/device.h) ----

var (
	wcErrorRE     = lazyre.New(`WC error: (\d+), Message: (.+)$`)
	mlx5eCQERE    = lazyre.New(`(?i)Error cqe on cqn 0x([0-9a-f]+), ci 0x([0-9a-f]+), (?:qn|sqn|rqn) 0x([0-9a-f]+), opcode 0x([0-9a-f]+), syndrome 0x([0-9a-f]+), vendor syndrome 0x([0-9a-f]+)`)
	dumpCQERE     = lazyre.New(`(?i)^dump error cqe|(Requestor|Responder) error cqe on cqn 0x([0-9a-f]+)|^dump cqe for cqn 0x([0-9a-f]+)`)
	cqeSyndLineRE = lazyre.New(`(?i)^syndrome 0x([0-9a-f]+), vendor syndrome 0x([0-9a-f]+)`)
	dpdkCQERE     = lazyre.New(`Unexpected CQE error syndrome 0x([0-9a-f]+) CQN = (\d+) [SR]QN = (\d+) wqe_counter = (\d+)`)
	userWCRE      = lazyre.New(`(?i)(?:failed )?status (\d+)(?: \(([^)]*)\))?:? .*?(?:vendor[ _]err(?:or)?|syndro?m?e?) (0x[0-9a-f]+)`)
)

// cqeSyndromes: MLX5_CQE_SYNDROME_* (include/linux/mlx5/cq.h), the kernel's
// text, who acts and what it means in practice.
var cqeSyndromes = map[uint64]struct{ name, text, category, meaning string }{
	0x01: {"LOCAL_LENGTH_ERR", "local length error", CatSoftware, "a posted receive buffer is smaller than the message, or a send's length is beyond the QP's limits: check the receive buffer sizes and the MTU"},
	0x02: {"LOCAL_QP_OP_ERR", "local QP operation error", CatSoftware, "the WQE is malformed for this QP (an opcode the QP type does not allow, bad inline size, bad segment)"},
	0x04: {"LOCAL_PROT_ERR", "local protection error", CatSoftware, "a local buffer is not covered by its memory key (wrong lkey, deregistered memory, length past the region, access rights)"},
	0x05: {"WR_FLUSH_ERR", "WR flushed", CatSoftware, "the QP had already gone to ERROR, so every outstanding work request is flushed: this is not the cause; find the first error on this QP (an earlier CQE with another syndrome, a failed modify, an async event)"},
	0x06: {"MW_BIND_ERR", "memory bind operation error", CatSoftware, "a memory-window bind failed (bad MR, rights or range)"},
	0x10: {"BAD_RESP_ERR", "bad response error", CatHardware, "the responder sent an unexpected transport response: a peer problem or corruption on the path"},
	0x11: {"LOCAL_ACCESS_ERR", "local access error", CatSoftware, "a local protection fault on an incoming RDMA write or atomic (the local MR lacks the rights)"},
	0x12: {"REMOTE_INVAL_REQ_ERR", "remote invalid request error", CatSoftware, "the peer refused the request: an opcode it does not support on that QP, a message too long for its receive buffer, or an RDMA/atomic to a QP without the access flag"},
	0x13: {"REMOTE_ACCESS_ERR", "remote access error", CatSoftware, "the peer's memory key refused the access: a wrong rkey or address, a deregistered region, missing remote rights"},
	0x14: {"REMOTE_OP_ERR", "remote operation error", CatSoftware, "the peer could not complete the operation (its receive queue in error, an internal error at the peer)"},
	0x15: {"TRANSPORT_RETRY_EXC_ERR", "transport retry counter exceeded", CatHardware, "the requester got no ACK after retry_cnt retries: look at the link (flaps, loss, errors), the PSN window and congestion (cxray roce advise), and the peer (down, its QP in error, a path or GID mismatch, timeout too short)"},
	0x16: {"RNR_RETRY_EXC_ERR", "RNR retry counter exceeded", CatSoftware, "the peer had no receive posted (receiver not ready) for rnr_retry attempts: the receiving application does not post receives fast enough"},
	0x22: {"REMOTE_ABORTED_ERR", "operation aborted", CatSoftware, "the operation was aborted at the peer"},
}

// ibWCStatus maps ib_wc_status values (what user space and mlx5_ib print)
// to the CQE syndrome they come from.
var ibWCStatus = map[uint64]uint64{1: 0x01, 2: 0x02, 4: 0x04, 5: 0x05, 6: 0x06, 7: 0x10, 8: 0x11, 9: 0x12, 10: 0x13, 11: 0x14, 12: 0x15, 13: 0x16, 16: 0x22}

type cqeState struct {
	ev           Event
	bytes        []byte
	synd, vendor string
	knownSynd    bool
}

func (r *klogReader) cqeHeader(ev *Event, msg string) bool {
	switch {
	case wcErrorRE.MatchString(msg):
		m := wcErrorRE.FindStringSubmatch(msg)
		st, _ := strconv.ParseUint(m[1], 10, 64)
		ev.Fields = append(ev.Fields, Fact{"ib_wc_status", m[1] + " (" + m[2] + ")"})
		c := &cqeState{ev: *ev}
		if s, ok := ibWCStatus[st]; ok {
			c.synd, c.knownSynd = hx(s), true
		}
		r.cqe = c
		return true
	case mlx5eCQERE.MatchString(msg):
		m := mlx5eCQERE.FindStringSubmatch(msg)
		ev.Fields = append(ev.Fields, Fact{"cqn", "0x" + m[1]}, Fact{"ci", "0x" + m[2]}, Fact{"qn", "0x" + m[3]})
		r.cqe = &cqeState{ev: *ev, synd: "0x" + m[5], vendor: "0x" + m[6], knownSynd: true}
		return true
	case dumpCQERE.MatchString(msg):
		if r.cqe == nil {
			r.cqe = &cqeState{ev: *ev}
		}
		return true
	case dpdkCQERE.MatchString(msg):
		m := dpdkCQERE.FindStringSubmatch(msg)
		ev.Fields = append(ev.Fields, Fact{"queue", m[3]}, Fact{"wqe_counter", m[4]})
		r.cqe = &cqeState{ev: *ev, synd: "0x" + m[1], knownSynd: true}
		return true
	case userWCRE.MatchString(msg) && strings.Contains(strings.ToLower(msg), "completion"):
		m := userWCRE.FindStringSubmatch(msg)
		st, _ := strconv.ParseUint(m[1], 10, 64)
		c := &cqeState{ev: *ev, vendor: m[3]}
		if s, ok := ibWCStatus[st]; ok {
			c.synd, c.knownSynd = hx(s), true
		}
		ev.Fields = append(ev.Fields, Fact{"ib_wc_status", m[1]})
		r.cqe = c
		r.flushCQE()
		return true
	}
	return false
}

// flushCQE decodes the pending CQE: its dump when there is one (the 64-byte
// error CQE, or the second half of a 128-byte one), else the header's
// numbers.
func (r *klogReader) flushCQE() {
	c := r.cqe
	if c == nil {
		return
	}
	r.cqe = nil
	ev := c.ev
	ev.Class, ev.Severity = ClassCQE, SevProblem
	var synd, vendor uint64
	have := c.knownSynd || c.synd != ""
	if c.synd != "" {
		synd = hexU(c.synd)
	}
	if c.vendor != "" {
		vendor = hexU(c.vendor)
	}
	b := c.bytes
	switch {
	case len(b) >= 128:
		b = b[64:128]
	case len(b) > 64:
		b = b[:64]
	}
	if len(b) == 64 {
		op := b[0x3f] >> 4
		synd, vendor, have = uint64(b[0x37]), uint64(b[0x36]), true
		qpn := uint32(b[0x39])<<16 | uint32(b[0x3a])<<8 | uint32(b[0x3b])
		ev.Fields = append(ev.Fields,
			Fact{"cqe opcode", fmt.Sprintf("0x%x (%s)", op, map[byte]string{0xd: "requester error", 0xe: "responder error", 0xc: "signature error", 0xf: "invalid"}[op])},
			Fact{"wqe opcode", hx(uint64(b[0x38]))},
			Fact{"qpn", fmt.Sprintf("0x%x", qpn)},
			Fact{"wqe_counter", fmt.Sprintf("%d", uint16(b[0x3c])<<8|uint16(b[0x3d]))},
			Fact{"srqn/user index", fmt.Sprintf("0x%x", uint32(b[0x20])<<24|uint32(b[0x21])<<16|uint32(b[0x22])<<8|uint32(b[0x23]))})
		if string(b[0x24:0x28]) == "seen" {
			ev.Fields = append(ev.Fields, Fact{"note", "bytes 0x24..0x28 read 'seen': DPDK marks CQEs it already handled so"})
		}
	} else if len(b) > 0 {
		r.p.Notes = append(r.p.Notes, fmt.Sprintf("line %d: the CQE dump holds %d of its 64 bytes; decoded from the header line only", ev.Line, len(b)))
		r.p.Partial = len(r.p.Events) == 0 && !have
	}
	if !have {
		ev.Severity, ev.Category = SevProblem, CatInput
		ev.Meaning = "an error CQE whose syndrome is not in the paste (the dump is missing or cut)"
		ev.Next = "paste the whole report: the header line and the hex dump lines after it"
		r.emit(ev)
		return
	}
	s, ok := cqeSyndromes[synd]
	if !ok {
		s.name, s.text, s.category, s.meaning = "unknown", "general error", CatFirmware, "a syndrome the kernel does not name"
	}
	ev.Fields = append(ev.Fields, Fact{"syndrome", fmt.Sprintf("0x%02x %s (%s)", synd, s.name, s.text)}, Fact{"vendor syndrome", fmt.Sprintf("0x%02x (firmware-internal; quote it as given)", vendor)})
	ev.Category, ev.Meaning = s.category, "error completion: "+s.text+": "+s.meaning
	switch synd {
	case 0x15:
		ev.Next = "check the port's link and error counters (cxray link -d DEV --counters), the PSN window (cxray roce advise), and the peer's state; raise the QP's timeout/retry_cnt only after that"
	case 0x05:
		ev.Severity = SevWarning
		ev.Next = "look for the first error of this QP earlier in the log or the application's output; this completion only drains the queue"
	case 0x16:
		ev.Next = "post receives earlier (or more of them), or raise rnr_retry / min_rnr_timer"
	default:
		ev.Next = "check the work request and memory registration the application posted for this QP (qpn above); cxray qp QPN -d DEV shows its context"
	}
	r.emit(ev)
}

// ---- health buffer (health.c) ----

var (
	healthIssueRE = lazyre.New(`Health issue observed, (.+?), severity\((\d+)\) (\w+):?`)
	healthSyndRE  = lazyre.New(`^synd 0x([0-9a-f]+): (.+)$`)
	rawFwVerRE    = lazyre.New(`^raw fw_ver 0x([0-9a-f]+)`)
	fatalRE       = lazyre.New(`Fatal error (\d+) detected`)
	healthKVRE    = lazyre.New(`^(assert_var\[\d+\]|assert_exit_ptr|assert_callra|fw_ver|time|hw_id|rfr|crr|severity|irisc_index|ext_synd)\s+(.+)$`)
)

// healthSyndromes: the health buffer's synd (health.c hsynd_str), who acts.
var healthSyndromes = map[uint64]struct{ text, category, next string }{
	0x1:  {"firmware internal error", CatFirmware, "collect devlink health dump show pci/BDF reporter fw_fatal, update the firmware"},
	0x7:  {"irisc not responding", CatFirmware, "a firmware reset (mlxfwreset) or a power cycle; update the firmware; if it recurs, the adapter"},
	0x8:  {"unrecoverable hardware error", CatHardware, "power cycle the host; if it recurs, replace the adapter"},
	0x9:  {"firmware CRC error", CatFirmware, "the firmware image is corrupt: burn it again (flint -d DEV -i IMAGE burn) and power cycle"},
	0xa:  {"ICM fetch PCI error", CatHardware, "the adapter could not read host memory over PCIe: check AER errors, the slot and riser, IOMMU faults"},
	0xb:  {"HW fatal error", CatHardware, "power cycle; if it recurs, replace the adapter"},
	0xc:  {"async EQ buffer overrun", CatFirmware, "the driver did not drain events fast enough: update driver and firmware"},
	0xd:  {"EQ error", CatFirmware, "update driver and firmware"},
	0xe:  {"Invalid EQ referenced", CatFirmware, "update driver and firmware"},
	0xf:  {"FFSER error", CatHardware, "power cycle; if it recurs, replace the adapter"},
	0x10: {"High temperature", CatHardware, "the adapter overheated: check the airflow and fans (cxray health shows the sensors)"},
	0x12: {"ICM fetch PCI data poisoned error", CatHardware, "host memory or the PCIe path returned poisoned data: check the host's memory errors (EDAC) and AER"},
	0x13: {"Trust lockdown error", CatFirmware, "a secure-boot/lockdown check failed: check the firmware's signature and the host's lockdown settings"},
}

func (r *klogReader) health(ev *Event, msg string) bool {
	switch {
	case healthIssueRE.MatchString(msg):
		m := healthIssueRE.FindStringSubmatch(msg)
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatFirmware
		ev.Fields = append(ev.Fields, Fact{"report", m[1]}, Fact{"severity", m[2] + " " + m[3]})
		ev.Meaning = "the firmware's health buffer reports: " + m[1]
		ev.Next = "see the synd line below it; collect devlink health dump show pci/BDF reporter fw"
		r.emit(*ev)
		return true
	case healthSyndRE.MatchString(msg):
		m := healthSyndRE.FindStringSubmatch(msg)
		synd := hexU(m[1])
		h, ok := healthSyndromes[synd]
		if !ok {
			h = healthSyndromes[0x1]
			h.text = strings.TrimSpace(m[2])
		}
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, h.category
		ev.Fields = append(ev.Fields, Fact{"health syndrome", fmt.Sprintf("0x%x %s", synd, h.text)})
		ev.Meaning = "firmware health syndrome 0x" + m[1] + ": " + h.text
		ev.Next = h.next
		r.emit(*ev)
		return true
	case rawFwVerRE.MatchString(msg):
		v := hexU(rawFwVerRE.FindStringSubmatch(msg)[1])
		ev.Class, ev.Severity = ClassInfo, SevInfo
		ev.Meaning = fmt.Sprintf("firmware %d.%d.%d (from the health buffer's raw fw_ver)", v>>24, (v>>16)&0xff, v&0xffff)
		if v == 0xffffffff {
			ev.Meaning = "the health buffer reads all ones: the device is gone from PCI"
		}
		r.emit(*ev)
		return true
	case healthKVRE.MatchString(msg):
		m := healthKVRE.FindStringSubmatch(msg)
		if m[1] == "crr" && strings.TrimSpace(m[2]) == "1" || m[1] == "rfr" && strings.TrimSpace(m[2]) == "1" {
			ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatFirmware
			ev.Meaning = map[string]string{"crr": "the firmware asks for a cold reset (crr 1): a power cycle, not a reboot", "rfr": "the firmware asks for a reset to recover (rfr 1)"}[m[1]]
			ev.Next = "power cycle the host (cold reset), or mlxfwreset for rfr; then check the firmware version"
			r.emit(*ev)
		}
		return true
	case fatalRE.MatchString(msg):
		n, _ := strconv.Atoi(fatalRE.FindStringSubmatch(msg)[1])
		why := map[int]string{1: "PCI reads return all ones (the device fell off the bus)", 2: "the PCI channel is offline (AER/EEH)", 3: "the NIC interface was disabled", 4: "a NIC software reset", 5: "a firmware syndrome asking for a reset"}[n]
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatHardware
		if n >= 3 {
			ev.Category = CatFirmware
		}
		ev.Fields = append(ev.Fields, Fact{"fatal sensor", strconv.Itoa(n)})
		ev.Meaning = "the driver detected a fatal error: " + cmpOr(why, "sensor "+strconv.Itoa(n))
		ev.Next = "look for PCIe/AER errors and health reports just before this line; the driver recovers (health recovery) or unloads"
		r.emit(*ev)
		return true
	case strings.Contains(msg, "device's health compromised"):
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatFirmware
		ev.Meaning = "the firmware's health counter stopped moving (3 polls missed): the firmware is hung"
		ev.Next = "devlink health diagnose pci/BDF reporter fw; a firmware reset or power cycle; update the firmware"
		r.emit(*ev)
		return true
	case strings.Contains(msg, "PCI slot is unavailable"):
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatHardware
		ev.Meaning = "the device does not answer on PCI (reads return all ones)"
		ev.Next = "check the slot, riser and power; lspci -vv -s BDF; AER lines before this one"
		r.emit(*ev)
		return true
	case strings.Contains(msg, "health recovery failed") || strings.Contains(msg, "Driver is in error state. Unloading"):
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatFirmware
		ev.Meaning = "the driver could not recover the device: it stays down until reset"
		ev.Next = "power cycle the host; keep the health report lines above for NVIDIA support"
		r.emit(*ev)
		return true
	case strings.Contains(msg, "health recovery succeeded") || strings.Contains(msg, "starting health recovery flow") || strings.Contains(msg, "Issuing FW Reset"):
		ev.Class, ev.Severity = ClassHealth, SevWarning
		ev.Category = CatFirmware
		ev.Meaning = "the driver reset the device after a fatal error: " + msg
		ev.Next = "the device recovered by itself; find the error that caused it above, and watch for repeats"
		r.emit(*ev)
		return true
	case msg == "Cold reset is required":
		ev.Class, ev.Severity, ev.Category = ClassHealth, SevProblem, CatHardware
		ev.Meaning = "the firmware needs a cold reset: power cycle the host (a warm reboot is not enough)"
		ev.Next = "power cycle the host"
		r.emit(*ev)
		return true
	}
	return false
}

// ---- probe and bring-up (main.c, lib/tout.c) ----

var (
	preInitRE  = lazyre.New(`Firmware over (\d+) MS in pre-initializing state, aborting`)
	waitInitRE = lazyre.New(`Waiting for FW pre-initializing, timeout abort in (\d+)s \(0x([0-9a-f]+)\)`)
	fwVerRE    = lazyre.New(`^firmware version: (\d+\.\d+\.\d+)`)
	initOneRE  = lazyre.New(`(?:mlx5_init_one|init_one|probe_one|mlx5_load_one) failed with error code (-?\d+)`)
	pcieBWRE   = lazyre.New(`([\d.]+) Gb/s available PCIe bandwidth(?:, limited by ([\d.]+ GT/s(?: PCIe)?) (x\d+) link at ([0-9a-f:.]+) \(capable of ([\d.]+) Gb/s with ([\d.]+ GT/s(?: PCIe)?) (x\d+) link\))?`)
)

var probeFailures = map[string]string{
	"Failed initializing command interface": "the driver could not set up the command queue with the firmware",
	"enable hca failed":                     "ENABLE_HCA failed: the firmware refused to enable this function (the command failure line before it says why)",
	"failed to set issi":                    "the firmware and driver could not agree on the interface version (ISSI)",
	"failed to allocate boot pages":         "the firmware's first memory request failed (host memory, IOMMU)",
	"handle_hca_cap failed":                 "setting the device's capabilities failed at probe",
	"set_hca_cap failed":                    "setting the device's capabilities failed at probe",
	"init hca failed":                       "INIT_HCA failed: the firmware could not initialise the function",
}

func (r *klogReader) probe(ev *Event, msg string) bool {
	switch {
	case preInitRE.MatchString(msg):
		m := preInitRE.FindStringSubmatch(msg)
		ev.Class, ev.Severity, ev.Category = ClassProbe, SevProblem, CatFirmware
		ev.Fields = append(ev.Fields, Fact{"waited", m[1] + " ms"})
		ev.Meaning = fmt.Sprintf("the firmware stayed in pre-initializing for %s ms: it never came up, so the driver gave up on the device", m[1])
		ev.Next = "power cycle the host (not a reboot); if it stays, the firmware image may be bad: query it with mstflint -d BDF q and burn a good image (flint in recovery mode); check the slot's power"
		r.emit(*ev)
		return true
	case waitInitRE.MatchString(msg):
		m := waitInitRE.FindStringSubmatch(msg)
		ev.Class, ev.Severity, ev.Category = ClassProbe, SevWarning, CatFirmware
		ev.Fields = append(ev.Fields, Fact{"initializing", "0x" + m[2]}, Fact{"abort in", m[1] + " s"})
		ev.Meaning = "the firmware is slow to come up (still pre-initializing)"
		ev.Next = "wait for the outcome on the following lines; a firmware upgrade or reset in progress takes this long"
		r.emit(*ev)
		return true
	case fwVerRE.MatchString(msg):
		ev.Class, ev.Severity = ClassInfo, SevInfo
		ev.Meaning = "firmware " + fwVerRE.FindStringSubmatch(msg)[1] + " at probe"
		r.emit(*ev)
		return true
	case initOneRE.MatchString(msg):
		ev.Class, ev.Severity, ev.Category = ClassProbe, SevProblem, CatFirmware
		ev.Meaning = "the driver failed to initialise the device (error " + initOneRE.FindStringSubmatch(msg)[1] + "): it is not usable"
		ev.Next = "the lines before this one say which step failed"
		r.emit(*ev)
		return true
	case pcieBWRE.MatchString(msg):
		m := pcieBWRE.FindStringSubmatch(msg)
		ev.Class = ClassPCIe
		if m[2] == "" {
			ev.Severity = SevInfo
			ev.Meaning = m[1] + " Gb/s of PCIe bandwidth available: the full link"
		} else {
			ev.Severity, ev.Category = SevWarning, CatHardware
			ev.Fields = append(ev.Fields, Fact{"link", m[2] + " " + m[3]}, Fact{"limited at", m[4]}, Fact{"capable", m[6] + " " + m[7]})
			ev.Meaning = fmt.Sprintf("the PCIe link gives %s Gb/s of %s: limited by %s %s at %s", m[1], m[5], m[2], m[3], m[4])
			ev.Next = "if the limit is at the adapter, reseat it or try another slot; if at a bridge, the slot or riser is narrower/slower (check the board's manual); cxray can compare with the port speed"
		}
		r.emit(*ev)
		return true
	}
	for text, meaning := range probeFailures {
		if strings.Contains(msg, text) {
			ev.Class, ev.Severity, ev.Category = ClassProbe, SevProblem, CatFirmware
			ev.Meaning = meaning
			ev.Next = "check the firmware (mstflint -d BDF q), power cycle, and look for the command failure or health lines just before"
			r.emit(*ev)
			return true
		}
	}
	return false
}

// ---- asynchronous events (events.c) ----

var (
	moduleEventRE = lazyre.New(`Port module event(\[error\])?: module (\d+), ([^,]+)(?:, (.+))?`)
	linkRE        = lazyre.New(`^Link (up|down)`)
	pciePowerRE   = lazyre.New(`Detected insufficient power on the PCIe slot \((\d+)W\)`)
	tempWarnRE    = lazyre.New(`High temperature on sensors with bit set (0x[0-9a-f]+) (0x[0-9a-f]+)`)
)

// moduleErrors: the module error names events.c prints, what to do.
var moduleErrors = map[string]string{
	"Power budget exceeded":           "the module draws more power than the cage allows: use a lower-power module, or enable high-power modules in the NV configuration",
	"Long Range for non MLNX cable":   "the firmware refuses a third-party long-range module: use a qualified module",
	"Bus stuck (I2C or data shorted)": "the module's I2C bus is stuck: reseat the module; if it stays, replace it (or try another cage)",
	"No EEPROM/retry timeout":         "the module's EEPROM does not answer: reseat or replace the module",
	"Enforce part number list":        "the module is not on the adapter's allowed part-number list",
	"Unknown identifier":              "the module's identifier is unknown to the firmware: an unsupported module type, or a corrupt EEPROM",
	"High Temperature":                "the module overheated and was shut down: check airflow; replace the module if it recurs",
	"Bad or shorted cable/module":     "the cable or module is bad or shorted: replace it",
}

func (r *klogReader) events(ev *Event, msg string) bool {
	switch {
	case moduleEventRE.MatchString(msg):
		m := moduleEventRE.FindStringSubmatch(msg)
		ev.Class = ClassModule
		ev.Fields = append(ev.Fields, Fact{"module", m[2]}, Fact{"status", strings.TrimSpace(m[3])})
		if m[1] != "" || m[4] != "" {
			e := strings.TrimSpace(m[4])
			ev.Fields = append(ev.Fields, Fact{"error", e})
			ev.Severity, ev.Category = SevProblem, CatHardware
			ev.Meaning = fmt.Sprintf("module %s: %s, %s", m[2], strings.TrimSpace(m[3]), e)
			ev.Next = cmpOr(moduleErrors[e], "reseat the module; if the error stays, try another module")
			if strings.Contains(e, "powered down due to insufficient") {
				ev.Next = "the PCIe slot does not supply enough power for the ports: use a slot or server that advertises more power (see the slot's power in lspci -vv)"
			}
		} else {
			ev.Severity = SevInfo
			ev.Meaning = fmt.Sprintf("module %s: %s", m[2], strings.TrimSpace(m[3]))
			if strings.Contains(m[3], "unplugged") || strings.Contains(m[3], "error") || strings.Contains(m[3], "disabled") {
				ev.Severity, ev.Category = SevWarning, CatHardware
				ev.Next = "if nobody pulled it, reseat the module and check cxray module -d DEV"
			}
		}
		r.emit(*ev)
		return true
	case linkRE.MatchString(msg):
		ev.Class = ClassPort
		if linkRE.FindStringSubmatch(msg)[1] == "down" {
			ev.Severity, ev.Category = SevWarning, CatHardware
			ev.Meaning = "the port's link went down"
			ev.Next = "cxray link -d DEV shows why (the firmware's troubleshooting message); a peer reboot or cable pull explains a single event, repeated flaps do not"
		} else {
			ev.Severity = SevInfo
			ev.Meaning = "the port's link came up"
		}
		r.emit(*ev)
		return true
	case pciePowerRE.MatchString(msg):
		ev.Class, ev.Severity, ev.Category = ClassPCIe, SevProblem, CatHardware
		ev.Meaning = "the PCIe slot advertises too little power (" + pciePowerRE.FindStringSubmatch(msg)[1] + " W) for the adapter"
		ev.Next = "move the adapter to a slot with more power, or check the server's slot power setting"
		r.emit(*ev)
		return true
	case tempWarnRE.MatchString(msg):
		ev.Class, ev.Severity, ev.Category = ClassTemperature, SevProblem, CatHardware
		ev.Meaning = "the firmware reports high temperature (sensor bits " + tempWarnRE.FindStringSubmatch(msg)[2] + ")"
		ev.Next = "check airflow and fans; cxray health -d DEV shows the temperatures"
		r.emit(*ev)
		return true
	}
	return false
}

// ---- PCIe AER (drivers/pci/pcie/aer.c) ----

var (
	aerHeadRE    = lazyre.New(`(?:PCIe|CXL) Bus Error: severity=([^,]+), type=([^,]+), \(([^)]+)\)`)
	aerStatusRE  = lazyre.New(`device \[([0-9a-f]{4}):([0-9a-f]{4})\] error status/mask=([0-9a-f]{8})/([0-9a-f]{8})`)
	aerDetailRE  = lazyre.New(`\[\s*(\d+)\]\s+([A-Za-z][\w ()-]*?)(\s+\(First\))?\s*$`)
	aerMsgRE     = lazyre.New(`AER: (?:Corrected|Uncorrected|Correctable|Uncorrectable|Multiple \w+) error (?:message )?received from ([0-9a-f:.]+)`)
	aerStatus2RE = lazyre.New(`aer_status: 0x([0-9a-f]{8}), aer_mask: 0x([0-9a-f]{8})`)
)

func (r *klogReader) pcie(ev *Event, msg string) bool {
	switch {
	case aerHeadRE.MatchString(msg):
		m := aerHeadRE.FindStringSubmatch(msg)
		sev := strings.TrimSpace(m[1])
		ev.Class = ClassPCIe
		ev.Fields = append(ev.Fields, Fact{"severity", sev}, Fact{"layer", m[2]}, Fact{"agent", m[3]})
		if strings.HasPrefix(sev, "Correct") {
			ev.Severity, ev.Category = SevWarning, CatHardware
			ev.Meaning = "a corrected PCIe error (" + m[2] + "): the link retried and recovered; a few are harmless, a steady stream means signal trouble"
			ev.Next = "count them over time (aer_dev_correctable in sysfs); if they keep coming, reseat the adapter, check the riser and slot, or try another slot"
		} else {
			ev.Severity, ev.Category = SevProblem, CatHardware
			ev.Meaning = "an uncorrectable PCIe error (" + sev + ", " + m[2] + "): data was lost; the device may be reset"
			ev.Next = "check the slot, riser and adapter; the error bits below name the fault; update the platform firmware (BIOS) and the adapter firmware"
		}
		r.aer = r.emit(*ev)
		return true
	case aerMsgRE.MatchString(msg):
		ev.Class, ev.Severity = ClassPCIe, SevInfo
		ev.Meaning = "the root port received an AER message from " + aerMsgRE.FindStringSubmatch(msg)[1]
		r.emit(*ev)
		return true
	}
	return false
}

// aerDetail attaches the status line and the named bits to the AER event.
func (r *klogReader) aerDetail(msg string) bool {
	if m := aerStatus2RE.FindStringSubmatch(msg); m != nil {
		r.aer.Fields = append(r.aer.Fields, Fact{"status/mask", "0x" + m[1] + "/0x" + m[2]})
		return true
	}
	if strings.HasPrefix(msg, "AER: aer_layer=") || strings.HasPrefix(msg, "AER: aer_agent=") || strings.HasPrefix(msg, "aer_layer=") {
		return true
	}
	if m := aerStatusRE.FindStringSubmatch(msg); m != nil {
		r.aer.Fields = append(r.aer.Fields, Fact{"device id", m[1] + ":" + m[2]}, Fact{"status/mask", "0x" + m[3] + "/0x" + m[4]})
		if m[1] == "15b3" {
			r.aer.Fields = append(r.aer.Fields, Fact{"vendor", "Mellanox/NVIDIA"})
		}
		return true
	}
	if m := aerDetailRE.FindStringSubmatch(msg); m != nil {
		v := strings.TrimSpace(m[2])
		if m[3] != "" {
			v += " (first)"
		}
		r.aer.Fields = append(r.aer.Fields, Fact{"bit " + m[1], v})
		r.aer.Meaning += "; " + v
		return true
	}
	return false
}

// ---- queue timeouts and health reporters of mlx5e (en/reporter_*.c) ----

var (
	txTimeoutRE = lazyre.New(`TX timeout on queue: (\d+), SQ: (0x[0-9a-f]+), CQ: (0x[0-9a-f]+), SQ Cons: (0x[0-9a-f]+) SQ Prod: (0x[0-9a-f]+), usecs since last trans: (\d+)`)
	errCQEOnRE  = lazyre.New(`ERR CQE on (SQ|RQ|ICOSQ): (0x[0-9a-f]+)`)
	rxTimeoutRE = lazyre.New(`RX timeout on channel: (\d+)`)
)

func (r *klogReader) queue(ev *Event, msg string) bool {
	switch {
	case txTimeoutRE.MatchString(msg):
		m := txTimeoutRE.FindStringSubmatch(msg)
		ev.Class, ev.Severity, ev.Category = ClassQueue, SevProblem, CatFirmware
		ev.Fields = append(ev.Fields, Fact{"queue", m[1]}, Fact{"sq", m[2]}, Fact{"cq", m[3]}, Fact{"consumer/producer", m[4] + "/" + m[5]}, Fact{"since last transmit", m[6] + " us"})
		ev.Meaning = "the send queue stopped completing: the adapter did not report sends for " + m[6] + " us"
		if m[4] == m[5] {
			ev.Meaning += " (consumer = producer: the completions were lost, an interrupt/EQ problem)"
		}
		ev.Next = "devlink health show (tx reporter) says whether it recovered; repeated timeouts: update firmware and driver, check the health reports"
		r.emit(*ev)
		return true
	case rxTimeoutRE.MatchString(msg):
		ev.Class, ev.Severity, ev.Category = ClassQueue, SevProblem, CatFirmware
		ev.Meaning = "the receive channel " + rxTimeoutRE.FindStringSubmatch(msg)[1] + " stopped: no completions"
		ev.Next = "devlink health show (rx reporter); update firmware and driver if it recurs"
		r.emit(*ev)
		return true
	case errCQEOnRE.MatchString(msg):
		m := errCQEOnRE.FindStringSubmatch(msg)
		ev.Class, ev.Severity, ev.Category = ClassQueue, SevWarning, CatSoftware
		ev.Meaning = "the Ethernet driver got an error completion on " + m[1] + " " + m[2] + " and recovers the queue"
		ev.Next = "the Error cqe line before it gives the syndrome; occasional recoveries are handled, a stream of them is not"
		r.emit(*ev)
		return true
	}
	return false
}
