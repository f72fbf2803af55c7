package cmdif

import (
	"github.com/cxray/cxray/prm"
)

// The emulated driver's objects: a few QPs and memory keys, so QUERY_QP
// and QUERY_MKEY have something to show. Their contexts are built by field
// name (prm/cmdb qpc, mkc).

type qpObject struct {
	fields []prm.Assignment
	// Moving PSNs: the next send and receive PSNs advance at these packet
	// rates from power-on (24-bit, wrapping), and the last acknowledged
	// PSN trails the next send PSN by inFlight.
	sendBase, recvBase uint32
	sendRate, recvRate float64
	inFlight           uint32
}

type mkeyObject struct {
	fields []prm.Assignment
}

// Object numbers of the emulated QPs and MKEYs (the same on every
// function; QPNs and keys are per-function name spaces).
const (
	QPActive   = 0x000108   // RC, RTS, traffic flowing
	QPError    = 0x000109   // RC, ERR after its retries ran out
	QPDatagram = 0x00010a   // UD, RTS
	MKeyData   = 0x00010203 // index 0x102, local and remote read/write, 1 GiB of 4 KiB pages
	MKeyRO     = 0x00000201 // index 0x2, local read only, 2 MiB in one huge page
)

func (ep *Endpoint) buildObjects() {
	ep.qps[QPActive] = &qpObject{
		fields: []prm.Assignment{kv("state", "RTS"), kv("st", "RC"), kv("pd", 3), kv("mtu", "4K_BYTES"), kv("log_msg_max", 30),
			kv("retry_count", 7), kv("rnr_retry", 7), kv("cur_retry_count", 0), kv("cur_rnr_retry", 0), kv("remote_qpn", 0x000230),
			kv("counter_set_id", 1), kv("log_ack_req_freq", 8), kv("min_rnr_nak", 12), kv("rre", 1), kv("rwe", 1)},
		sendBase: 0x12a4b0, recvBase: 0x8f0001, sendRate: 50000, recvRate: 48000, inFlight: 16,
	}
	ep.qps[QPError] = &qpObject{
		fields: []prm.Assignment{kv("state", "ERR"), kv("st", "RC"), kv("pd", 3), kv("mtu", "4K_BYTES"), kv("log_msg_max", 30),
			kv("retry_count", 7), kv("rnr_retry", 7), kv("cur_retry_count", 7), kv("cur_rnr_retry", 0), kv("remote_qpn", 0x000231),
			kv("counter_set_id", 1), kv("next_send_psn", 0x000400), kv("last_acked_psn", 0x0003f8), kv("next_rcv_psn", 0x00a100)},
	}
	ep.qps[QPDatagram] = &qpObject{
		fields: []prm.Assignment{kv("state", "RTS"), kv("st", "UD"), kv("pd", 3), kv("mtu", "4K_BYTES"), kv("q_key", 0x80010000),
			kv("counter_set_id", 1)},
		sendBase: 0x000001, recvBase: 0x000001, sendRate: 200, recvRate: 200,
	}
	ep.mkeys[MKeyData>>8] = &mkeyObject{fields: []prm.Assignment{
		kv("mkey_7_0", MKeyData&0xff), kv("lr", 1), kv("lw", 1), kv("rr", 1), kv("rw", 1), kv("a", 0), kv("access_mode_1_0", 1),
		kv("qpn", 0xffffff), kv("pd", 3), kv("start_addr", 0x7f3a20000000), kv("len", 0x40000000), kv("log_page_size", 12),
		kv("translations_octword_size", 0x40000000>>12/2),
	}}
	ep.mkeys[MKeyRO>>8] = &mkeyObject{fields: []prm.Assignment{
		kv("mkey_7_0", MKeyRO&0xff), kv("lr", 1), kv("access_mode_1_0", 1), kv("qpn", 0xffffff), kv("pd", 3),
		kv("start_addr", 0x7f3a40000000), kv("len", 0x200000), kv("log_page_size", 21), kv("translations_octword_size", 1),
	}}
}

// queryQP answers QUERY_QP with the QP's context (qpc).
func (c *call) queryQP() {
	q, ok := c.ep.qps[uint32(c.get("qpn"))]
	if !ok {
		c.fail(statusBadParam, syndNoQP)
		return
	}
	as := prefixed("qpc.", q.fields)
	if q.sendRate > 0 {
		t := max(c.now.Sub(c.ep.a.Firmware.Boot()).Seconds(), 0)
		send := (q.sendBase + uint32(q.sendRate*t)) & 0xffffff
		recv := (q.recvBase + uint32(q.recvRate*t)) & 0xffffff
		as = append(as, kv("qpc.next_send_psn", send), kv("qpc.last_acked_psn", (send-q.inFlight)&0xffffff), kv("qpc.next_rcv_psn", recv))
	}
	c.set(as...)
}

// queryMKey answers QUERY_MKEY with the key's entry (mkc); the in mailbox
// names the key by its index (the key without its low byte).
func (c *call) queryMKey() {
	m, ok := c.ep.mkeys[uint32(c.get("mkey_index"))]
	if !ok {
		c.fail(statusBadParam, syndNoMKey)
		return
	}
	c.set(prefixed("memory_key_mkey_entry.", m.fields)...)
}

func prefixed(p string, as []prm.Assignment) []prm.Assignment {
	out := make([]prm.Assignment, len(as))
	for i, a := range as {
		out[i] = prm.Assignment{Path: p + a.Path, Value: a.Value}
	}
	return out
}

// QPNs and MKeys are the emulated driver's objects on every function, in
// number order: what a host's kernel would list (`rdma resource show`).
func QPNs() []uint32  { return []uint32{QPActive, QPError, QPDatagram} }
func MKeys() []uint32 { return []uint32{MKeyRO, MKeyData} }
