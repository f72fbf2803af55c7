package pci

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A Witness lets a later process tell a device semaphore held by a live
// cxray process from one that a killed cxray process left behind (SIGKILL,
// the OOM killer), so the semaphore can be released without ever taking it
// from a live holder.
//
// It is one file per PCI function beside mstflint's lock files,
// <dir>/DDDD:BB:DD.F_cxray, with one slot per semaphore (WitnessGateway,
// WitnessICMD). A slot is an open-file-description byte-range lock on byte n
// of the file, which this process holds for as long as it holds that
// semaphore and which the kernel drops when the process dies, and a record
// of the value this process writes into the semaphore (its ticket or PID),
// written before the semaphore is written. A process that holds a slot's
// lock and finds the semaphore holding the recorded value knows the
// recorder no longer holds it: it died, or gave up without releasing (its
// release write failed). mstflint never touches this file, so it changes
// nothing for mstflint's own short lock-retry budget; its holders are never
// recognised as dead (their tickets are not recorded anywhere).
//
// Records name the PID and mount namespaces they were written in: the file
// is shared by every namespace that shares /tmp, while the device behind a
// BDF is the one its own mount namespace shows (an emulated function in
// another `cxray emu run` has the same BDF). A record from another
// namespace is never acted on.
type Witness struct {
	f    *os.File
	path string
	self procID

	mu    sync.Mutex
	slots [witnessSlots]*WitnessSlot
}

// Witness slots.
const (
	WitnessGateway = 0 // the gateway (VSEC) semaphore: config offset cap+0xC
	WitnessICMD    = 1 // the ICMD semaphore: semaphore space, address 0

	witnessSlots = 2
	recordSize   = 128 // bytes per record; records start at recordSize*(slot+1)
)

// procID identifies a process across PID reuse and namespaces.
type procID struct {
	pid   int
	start uint64 // /proc/PID/stat field 22, clock ticks after boot
	pidNS string // readlink /proc/self/ns/pid
	mntNS string // readlink /proc/self/ns/mnt
}

// Path returns the witness file's name.
func (w *Witness) Path() string { return w.path }

// Slot returns the slot for one semaphore (WitnessGateway or WitnessICMD).
func (w *Witness) Slot(n int) *WitnessSlot {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.slots[n] == nil {
		w.slots[n] = &WitnessSlot{w: w, n: n}
	}
	return w.slots[n]
}

// Close closes the file, which drops any slot lock still held.
func (w *Witness) Close() error { return w.f.Close() }

// WitnessSlot is one semaphore's lock and record. It is not for concurrent
// use: the gateway and the ICMD client each serialise their holders.
type WitnessSlot struct {
	w    *Witness
	n    int
	held bool
	prev record // the record as the lock was taken: the last holder's
	have bool
}

// Record stores v as the value this process is about to write into the
// semaphore. Call it with the lock held, before the write.
func (s *WitnessSlot) Record(v uint32) error {
	b := encodeRecord(record{value: v, procID: s.w.self})
	if _, err := s.w.f.WriteAt(b, int64(recordSize*(s.n+1))); err != nil {
		return fmt.Errorf("semaphore witness %s: %w", s.w.path, err)
	}
	return nil
}

// Recorder returns the PID of the process that wrote the slot's record
// (0 when there is none), for messages about a holder: called while
// another process holds the lock, that is the holder.
func (s *WitnessSlot) Recorder() int {
	r, ok := s.read()
	if !ok {
		return 0
	}
	return r.pid
}

// Orphaned reports whether the semaphore value v was left behind by a
// process that no longer holds it, and that process's PID. Call it with the
// lock held. It is true only when the record found when the lock was taken
// (the last holder's, before this process's own replaced it) holds v, was written in this
// process's PID and mount namespaces, and its writer is gone (its PID does
// not exist, or is a zombie) or is still the same process (same start time:
// it let the lock go, so it no longer claims the semaphore; its release
// write failed). A PID now used by a newer process answers false: that
// process could be the holder itself, since the ICMD semaphore holds PIDs.
func (s *WitnessSlot) Orphaned(v uint32) (pid int, ok bool) {
	if v == 0 || !s.held {
		return 0, false
	}
	r, ok := s.prev, s.have
	if !ok || r.value != v || r.pidNS != s.w.self.pidNS || r.mntNS != s.w.self.mntNS {
		return 0, false
	}
	if r.pid == s.w.self.pid && r.start == s.w.self.start {
		return r.pid, true
	}
	start, alive := procStart(r.pid)
	return r.pid, !alive || start == r.start
}

func (s *WitnessSlot) read() (record, bool) {
	b := make([]byte, recordSize)
	n, err := s.w.f.ReadAt(b, int64(recordSize*(s.n+1)))
	if n < recordSize && err != nil {
		return record{}, false
	}
	return decodeRecord(b)
}

type record struct {
	value uint32
	procID
}

// encodeRecord writes "cxray-witness v1 VALUE PID START PIDNS MNTNS CRC",
// space padded to recordSize with a final newline, so `cat` shows it.
func encodeRecord(r record) []byte {
	body := fmt.Sprintf("cxray-witness v1 %08x %d %d %s %s", r.value, r.pid, r.start, r.pidNS, r.mntNS)
	line := fmt.Sprintf("%s %08x", body, crc32.ChecksumIEEE([]byte(body)))
	b := bytes.Repeat([]byte{' '}, recordSize)
	copy(b, line)
	b[recordSize-1] = '\n'
	return b
}

// decodeRecord parses what encodeRecord wrote; anything else (a torn or
// foreign record, zeros) is no record.
func decodeRecord(b []byte) (record, bool) {
	f := strings.Fields(string(b))
	if len(f) != 8 || f[0] != "cxray-witness" || f[1] != "v1" {
		return record{}, false
	}
	body := strings.Join(f[:7], " ")
	crc, err := strconv.ParseUint(f[7], 16, 32)
	if err != nil || uint32(crc) != crc32.ChecksumIEEE([]byte(body)) {
		return record{}, false
	}
	v, err1 := strconv.ParseUint(f[2], 16, 32)
	pid, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return record{}, false
	}
	return record{value: uint32(v), procID: procID{pid: pid, start: start, pidNS: f[5], mntNS: f[6]}}, true
}

func selfID() (procID, error) {
	pid := os.Getpid()
	start, ok := procStart(pid)
	if !ok {
		return procID{}, fmt.Errorf("cannot read /proc/%d/stat (is /proc mounted?)", pid)
	}
	pidNS, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return procID{}, err
	}
	mntNS, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return procID{}, err
	}
	return procID{pid: pid, start: start, pidNS: pidNS, mntNS: mntNS}, nil
}

// procStart returns a process's start time (field 22 of /proc/PID/stat) and
// whether the process exists. A zombie counts as gone: it holds no locks
// and runs no code.
func procStart(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may contain spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	return start, err == nil
}
