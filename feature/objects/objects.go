// Package objects decodes firmware object contexts: a queue pair's context
// (QUERY_QP: state, service type, PSNs, retry counters, error state) and a
// memory key's entry (QUERY_MKEY: access rights, start, length, page size,
// protection domain), from the command interface of a dev.Device or from
// raw bytes (a dump, or the RDMA netlink raw resource of the kernel
// backend). Layouts are the command database's qpc and mkc (prm/cmdb).
package objects

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// QP is a queue pair's context.
type QP struct {
	QPN   uint32 `json:"qpn"`
	State string `json:"state"` // RST, INIT, RTR, RTS, SQER, SQD, ERR, SUSPENDED
	Type  string `json:"type"`  // RC, UC, UD, XRC, DCI ...
	// Error: the QP is in an error state (ERR, or SQER: the send queue
	// stopped on an error), and why that usually is.
	Error     bool   `json:"error"`
	ErrorNote string `json:"error_note,omitempty"`
	PD        uint32 `json:"pd"`
	MTU       string `json:"mtu"`
	RemoteQPN uint32 `json:"remote_qpn"`
	// PSNs, 24 bits.
	NextSendPSN  uint32 `json:"next_send_psn"`
	LastAckedPSN uint32 `json:"last_acked_psn"`
	NextRecvPSN  uint32 `json:"next_recv_psn"`
	// Unacked is next_send_psn − last_acked_psn − 1 (mod 2^24): packets
	// in flight, or lost when the QP is stuck.
	Unacked uint32 `json:"unacked"`
	// RetryCount and RNRRetry are the limits; CurRetry and CurRNRRetry
	// the retries used on the packet in flight.
	RetryCount   uint8 `json:"retry_count"`
	RNRRetry     uint8 `json:"rnr_retry"`
	CurRetry     uint8 `json:"cur_retry_count"`
	CurRNRRetry  uint8 `json:"cur_rnr_retry"`
	CounterSetID uint8 `json:"counter_set_id"`
	// Context is the whole decoded qpc.
	Context *prm.Decoded `json:"-"`
}

// MKey is a memory key's entry.
type MKey struct {
	// Key is the whole key (index and variant byte) from QueryMKey; from
	// bytes alone, only the variant byte (the entry holds no more).
	Key   uint32 `json:"key"`
	Index uint32 `json:"index"` // the key without its low byte (what QUERY_MKEY takes)
	// Access rights.
	LocalRead   bool   `json:"local_read"`
	LocalWrite  bool   `json:"local_write"`
	RemoteRead  bool   `json:"remote_read"`
	RemoteWrite bool   `json:"remote_write"`
	Atomic      bool   `json:"atomic"`
	AccessMode  string `json:"access_mode"` // PA, MTT, KLMS, KSM, SW_ICM, MEMIC
	Start       uint64 `json:"start"`
	Length      uint64 `json:"length"`
	// WholeAddressSpace: length64 is set (the key covers 2^64 bytes and
	// Length is meaningless).
	WholeAddressSpace bool         `json:"whole_address_space"`
	PageSize          uint64       `json:"page_size"` // bytes (2^log_page_size)
	PD                uint32       `json:"pd"`
	QPN               uint32       `json:"qpn"` // 0xffffff: not bound to a QP
	Free              bool         `json:"free"`
	Context           *prm.Decoded `json:"-"`
}

// QueryQP reads a QP's context through the command interface.
func QueryQP(ctx context.Context, d *dev.Device, qpn uint32) (*QP, error) {
	out, err := d.Command(ctx, "QUERY_QP", []prm.Assignment{{Path: "qpn", Value: fmt.Sprint(qpn)}})
	if err != nil {
		return nil, err
	}
	qpc, err := sub(out, "qpc", "qpc")
	if err != nil {
		return nil, err
	}
	q := DecodeQP(qpc)
	q.QPN = qpn
	return q, nil
}

// QueryMKey reads a memory key's entry through the command interface.
func QueryMKey(ctx context.Context, d *dev.Device, key uint32) (*MKey, error) {
	out, err := d.Command(ctx, "QUERY_MKEY", []prm.Assignment{{Path: "mkey_index", Value: fmt.Sprint(key >> 8)}})
	if err != nil {
		return nil, err
	}
	mkc, err := sub(out, "memory_key_mkey_entry", "mkc")
	if err != nil {
		return nil, err
	}
	m := DecodeMKey(mkc)
	m.Index = key >> 8
	m.Key = m.Index<<8 | m.Key
	if m.Key != key {
		return m, fmt.Errorf("QUERY_MKEY for 0x%x answered key 0x%x: the index names another key now (its low byte, the variant, changed); query 0x%x", key, m.Key, m.Key)
	}
	return m, nil
}

// sub decodes the context inside an out mailbox with its own layout.
func sub(out *prm.Decoded, path, node string) (*prm.Decoded, error) {
	v, err := out.Get(path)
	if err != nil {
		return nil, err
	}
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	p, err := db.Plan(node)
	if err != nil {
		return nil, err
	}
	start := v.Bit() / 8
	return p.Decode(out.Raw[start:min(len(out.Raw), start+p.Bytes)])
}

// DecodeQPBytes decodes a qpc from raw bytes (a dump, the kernel's raw
// resource).
func DecodeQPBytes(b []byte) (*QP, error) {
	d, err := decodeBytes("qpc", b)
	if err != nil {
		return nil, err
	}
	return DecodeQP(d), nil
}

// DecodeMKeyBytes decodes an mkc from raw bytes.
func DecodeMKeyBytes(b []byte) (*MKey, error) {
	d, err := decodeBytes("mkc", b)
	if err != nil {
		return nil, err
	}
	return DecodeMKey(d), nil
}

func decodeBytes(node string, b []byte) (*prm.Decoded, error) {
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	p, err := db.Plan(node)
	if err != nil {
		return nil, err
	}
	if len(b) < p.Bytes {
		return nil, fmt.Errorf("%s is %d bytes; got %d", node, p.Bytes, len(b))
	}
	return p.Decode(b[:p.Bytes])
}

func u(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		return 0
	}
	return v.Uint()
}

func enum(d *prm.Decoded, path string) string {
	v, err := d.Get(path)
	if err != nil {
		return ""
	}
	if n, ok := v.EnumName(); ok {
		return n
	}
	return fmt.Sprint(v.Uint())
}

// DecodeQP reads the facts out of a decoded qpc.
func DecodeQP(d *prm.Decoded) *QP {
	q := &QP{
		State: enum(d, "state"), Type: enum(d, "st"), PD: uint32(u(d, "pd")), MTU: enum(d, "mtu"),
		RemoteQPN: uint32(u(d, "remote_qpn")), NextSendPSN: uint32(u(d, "next_send_psn")),
		LastAckedPSN: uint32(u(d, "last_acked_psn")), NextRecvPSN: uint32(u(d, "next_rcv_psn")),
		RetryCount: uint8(u(d, "retry_count")), RNRRetry: uint8(u(d, "rnr_retry")),
		CurRetry: uint8(u(d, "cur_retry_count")), CurRNRRetry: uint8(u(d, "cur_rnr_retry")),
		CounterSetID: uint8(u(d, "counter_set_id")), Context: d,
	}
	q.Unacked = (q.NextSendPSN - q.LastAckedPSN - 1) & 0xffffff
	if q.NextSendPSN == q.LastAckedPSN {
		q.Unacked = 0
	}
	switch q.State {
	case "ERR":
		q.Error = true
		q.ErrorNote = "the QP is in the error state; work requests complete with a flush error until it is reset"
		if q.RetryCount > 0 && q.CurRetry >= q.RetryCount {
			q.ErrorNote = fmt.Sprintf("the transport retries ran out (%d of %d) with %d packets unacknowledged: the peer or the path stopped answering", q.CurRetry, q.RetryCount, q.Unacked)
		} else if q.RNRRetry > 0 && q.RNRRetry < 7 && q.CurRNRRetry >= q.RNRRetry {
			q.ErrorNote = fmt.Sprintf("the receiver-not-ready retries ran out (%d of %d): the peer posted no receive buffers", q.CurRNRRetry, q.RNRRetry)
		}
	case "SQER":
		q.Error = true
		q.ErrorNote = "the send queue stopped on a completion error; the receive side still works"
	}
	return q
}

// DecodeMKey reads the facts out of a decoded mkc.
func DecodeMKey(d *prm.Decoded) *MKey {
	db, _ := cmdb.Load()
	mode := u(d, "access_mode_4_2")<<2 | u(d, "access_mode_1_0")
	m := &MKey{
		LocalRead: u(d, "lr") == 1, LocalWrite: u(d, "lw") == 1, RemoteRead: u(d, "rr") == 1, RemoteWrite: u(d, "rw") == 1,
		Atomic: u(d, "a") == 1, Start: u(d, "start_addr"), Length: u(d, "len"), WholeAddressSpace: u(d, "length64") == 1,
		PD: uint32(u(d, "pd")), QPN: uint32(u(d, "qpn")), Free: u(d, "free") == 1, Context: d,
	}
	if db != nil {
		m.AccessMode = db.ConstName("MLX5_MKC_ACCESS_MODE_", int64(mode))
	}
	if m.AccessMode == "" {
		m.AccessMode = fmt.Sprint(mode)
	}
	if lp := u(d, "log_page_size"); lp < 64 {
		m.PageSize = 1 << lp
	}
	// The entry carries only the key's low byte (its variant); QueryMKey
	// adds the index it asked for.
	m.Key = uint32(u(d, "mkey_7_0"))
	return m
}

// Rows lays a QP out as a table.
func (q *QP) Rows() [][]string {
	rows := [][]string{{"FIELD", "VALUE"},
		{"qpn", fmt.Sprintf("0x%06x", q.QPN)}, {"state", q.State}, {"type", q.Type}, {"pd", fmt.Sprint(q.PD)}, {"mtu", q.MTU},
		{"remote qpn", fmt.Sprintf("0x%06x", q.RemoteQPN)},
		{"next send psn", fmt.Sprintf("0x%06x", q.NextSendPSN)}, {"last acked psn", fmt.Sprintf("0x%06x", q.LastAckedPSN)},
		{"unacknowledged", fmt.Sprint(q.Unacked)}, {"next receive psn", fmt.Sprintf("0x%06x", q.NextRecvPSN)},
		{"retries", fmt.Sprintf("%d of %d", q.CurRetry, q.RetryCount)}, {"rnr retries", fmt.Sprintf("%d of %d", q.CurRNRRetry, q.RNRRetry)},
		{"counter set", fmt.Sprint(q.CounterSetID)},
	}
	if q.Error {
		rows = append(rows, []string{"error", q.ErrorNote})
	}
	return rows
}

// Rows lays an MKEY out as a table.
func (m *MKey) Rows() [][]string {
	var rights []string
	for _, r := range []struct {
		on   bool
		name string
	}{{m.LocalRead, "local read"}, {m.LocalWrite, "local write"}, {m.RemoteRead, "remote read"}, {m.RemoteWrite, "remote write"}, {m.Atomic, "atomic"}} {
		if r.on {
			rights = append(rights, r.name)
		}
	}
	length := fmt.Sprintf("0x%x (%d)", m.Length, m.Length)
	if m.WholeAddressSpace {
		length = "2^64 (the whole address space)"
	}
	qpn := fmt.Sprintf("0x%06x", m.QPN)
	if m.QPN == 0xffffff {
		qpn = "none"
	}
	return [][]string{{"FIELD", "VALUE"},
		{"key", fmt.Sprintf("0x%08x", m.Key)}, {"access", strings.Join(rights, ", ")}, {"access mode", m.AccessMode},
		{"start", fmt.Sprintf("0x%x", m.Start)}, {"length", length}, {"page size", fmt.Sprint(m.PageSize)},
		{"pd", fmt.Sprint(m.PD)}, {"qp", qpn}, {"free", fmt.Sprint(m.Free)},
	}
}

// FromRawQP decodes a QP from the kernel's raw resource (kernel backend,
// RDMA netlink RES_QP_GET_RAW; kernel.ParseRawResources). The payload of
// the dump's segment for the QP is taken to start with the QP context (the
// qpc layout of include/linux/mlx5/mlx5_ifc.h); mlx5_ib answers with a
// firmware resource dump (drivers/infiniband/hw/mlx5/restrack.c,
// include/linux/mlx5/rsc_dump.h). It has not been checked on hardware.
func FromRawQP(r kernel.RawResource) (*QP, error) {
	if r.Kind != kernel.ResQP {
		return nil, fmt.Errorf("objects: a %s resource is not a QP", r.Kind)
	}
	p, err := kernel.ObjectPayload(r.Raw, r.DumpIndex())
	if err != nil {
		return nil, err
	}
	q, err := DecodeQPBytes(p)
	if err != nil {
		return nil, fmt.Errorf("objects: QP 0x%x raw resource: %w", r.ID, err)
	}
	q.QPN = r.ID
	return q, nil
}

// FromRawMR decodes a memory key from the kernel's raw MR resource, as
// FromRawQP does a QP.
func FromRawMR(r kernel.RawResource) (*MKey, error) {
	if r.Kind != kernel.ResMR {
		return nil, fmt.Errorf("objects: a %s resource is not an MR", r.Kind)
	}
	p, err := kernel.ObjectPayload(r.Raw, r.DumpIndex())
	if err != nil {
		return nil, err
	}
	m, err := DecodeMKeyBytes(p)
	if err != nil {
		return nil, fmt.Errorf("objects: MR %d raw resource: %w", r.ID, err)
	}
	m.Index = r.LKey >> 8
	m.Key = m.Index<<8 | m.Key
	return m, nil
}
