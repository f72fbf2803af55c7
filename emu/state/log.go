package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Format and Version identify the log's layout and the meaning of its
// records. Version changes when a record written by one cxray would not
// bring another one's emulator to the same state.
const (
	Format  = "cxray-emu-state"
	Version = 1
)

// Header is the first line of a log: which scenario the state belongs to
// and how its clock runs.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Key names the state (the log file is Key.log).
	Key string `json:"key"`
	// Name is the emulator name that made it (emu, emu:cx7-2p400g,
	// emu:/abs/lab.yaml) and Source the profile or the absolute path of
	// the scenario file.
	Name   string `json:"name"`
	Source string `json:"source"`
	// SHA256 is the hash of the scenario: the file's bytes, or the
	// profile's built-in description.
	SHA256 string `json:"sha256"`
	// Created is the wall time the state was made.
	Created time.Time `json:"created"`
	// Origin is the emulated time at power-on. A real-time clock reads
	// Origin at wall time WallBase and runs with the wall clock from there,
	// in every process; a manual one starts at Origin and moves with the
	// clock records.
	Origin   time.Time `json:"origin"`
	WallBase time.Time `json:"wall_base"`
	Manual   bool      `json:"manual"`
}

// Kinds of records.
const (
	KindRegister = "reg"   // a register access that changed the device
	KindClock    = "clock" // a manual clock moved to Time
	KindPlug     = "plug"  // a module plugged into (or pulled from) a cage
)

// Record is one change of the device, in the order it happened.
type Record struct {
	Kind string    `json:"k"`
	Time time.Time `json:"t"`
	// Register accesses: the function (its PCI address), the register,
	// the method and the request bytes as sent.
	BDF    string `json:"bdf,omitempty"`
	ID     uint16 `json:"id,omitempty"`
	Method uint8  `json:"m,omitempty"`
	Data   []byte `json:"d,omitempty"`
	// Plugs: the adapter, the cage and the catalog module ("" pulls it).
	Adapter string `json:"adapter,omitempty"`
	Cage    int    `json:"cage,omitempty"`
	Module  string `json:"module,omitempty"`
}

// Lines are "CRC32 JSON\n": a line cut short (a writer killed mid-write,
// a power loss) has no newline or a CRC that does not match, and is
// ignored when it is the last one.

func encodeLine(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%08x %s\n", crc32.ChecksumIEEE(j), j), nil
}

// decodeLine checks a line (without its newline) and returns its JSON.
func decodeLine(line []byte) ([]byte, bool) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return nil, false
	}
	j := line[9:]
	return j, crc32.ChecksumIEEE(j) == uint32(sum)
}

// Log is a state's log file, open for reading and appending. It is not
// safe for concurrent use: the State serialises its calls. Between
// processes, an exclusive lock (Lock, Unlock) orders every read of new
// records and every append; a shared "user" lock held from OpenLog to
// Close lets Remove see that the state is in use.
type Log struct {
	path   string
	f      *os.File
	hdr    Header
	off    int64 // end of the last good record read
	torn   bool  // bytes after off are the remains of a cut-short record
	locked bool
	count  int // records read or written so far
}

// Byte ranges of the log's OFD locks: one for access, one for users.
const (
	lockAccess = 0
	lockUsers  = 1
)

// LockWait bounds the wait for another process's lock: an access holds
// it for microseconds, so a lock held longer is a stopped process.
var LockWait = 10 * time.Second

// ErrInUse is matched by Remove of a state another process has open.
var ErrInUse = errors.New("the emulator state is in use")

// OpenLog opens the log at path, making it with header want when there
// is none. A log made for another scenario or by another version is
// refused with the reason. The header returned is the log's own (its
// clock origin is what every process runs on).
func OpenLog(path string, want Header) (*Log, error) {
	want.Format, want.Version = Format, Version
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("emulator state: %w", err)
		}
		if err := lockRange(f, lockUsers, lockShared, LockWait); err != nil {
			f.Close()
			return nil, fmt.Errorf("emulator state %s: %w", path, err)
		}
		// Remove may have unlinked the file while we waited for the lock:
		// then start over on the new one.
		if same, err := samePath(f, path); err != nil || !same {
			f.Close()
			if attempt < 5 {
				continue
			}
			return nil, fmt.Errorf("emulator state %s keeps being removed while opened; is `cxray emu reset` running in a loop?", path)
		}
		l := &Log{path: path, f: f}
		if err := l.open(want); err != nil {
			f.Close()
			return nil, err
		}
		return l, nil
	}
}

func samePath(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

func (l *Log) open(want Header) error {
	if err := lockRange(l.f, lockAccess, lockExclusive, LockWait); err != nil {
		return fmt.Errorf("emulator state %s: %w", l.path, err)
	}
	defer lockRange(l.f, lockAccess, lockNone, 0)
	st, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("emulator state: %w", err)
	}
	if st.Size() == 0 {
		b, err := encodeLine(want)
		if err != nil {
			return err
		}
		if _, err := l.f.WriteAt(b, 0); err != nil {
			return fmt.Errorf("emulator state %s: %w", l.path, err)
		}
		l.hdr, l.off = want, int64(len(b))
		return nil
	}
	hdr, n, err := readHeader(l.f)
	if err != nil {
		return fmt.Errorf("emulator state %s: %w; remove it with `cxray emu reset` (or delete the file) to start over", l.path, err)
	}
	if why := mismatch(hdr, want); why != "" {
		return fmt.Errorf("emulator state %s: %s; `cxray emu reset %s` starts it over", l.path, why, resetArg(want.Name))
	}
	l.hdr, l.off = hdr, n
	return nil
}

func resetArg(name string) string {
	if name == "emu" {
		return ""
	}
	if a, ok := cutEmu(name); ok {
		return a
	}
	return name
}

func cutEmu(name string) (string, bool) {
	if len(name) > 4 && name[:4] == "emu:" {
		return name[4:], true
	}
	return "", false
}

// mismatch says why a stored header does not fit the one wanted ("" when
// it does).
func mismatch(have, want Header) string {
	switch {
	case have.Format != Format:
		return fmt.Sprintf("not an emulator state (format %q)", have.Format)
	case have.Version != want.Version:
		return fmt.Sprintf("made by a cxray whose emulator keeps state differently (version %d; this one writes version %d)", have.Version, want.Version)
	case have.Key != want.Key || have.Source != want.Source:
		return fmt.Sprintf("it is the state of %s (%s), not of %s (%s)", have.Name, have.Source, want.Name, want.Source)
	case have.SHA256 != want.SHA256:
		what := "the scenario"
		if strings.HasPrefix(want.Source, "profile ") {
			what = "the " + want.Source + " (a new cxray?)"
		}
		return fmt.Sprintf("%s changed since the state was made (sha256 %.12s, now %.12s)", what, have.SHA256, want.SHA256)
	case have.Manual != want.Manual:
		return "the scenario's clock mode changed since the state was made"
	}
	return ""
}

// readHeader reads the first line; n is where the records start.
func readHeader(r io.ReaderAt) (Header, int64, error) {
	buf := make([]byte, 4096)
	k, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, 0, err
	}
	i := bytes.IndexByte(buf[:k], '\n')
	if i < 0 {
		return Header{}, 0, errors.New("its header line is cut short or too long")
	}
	j, ok := decodeLine(buf[:i])
	if !ok {
		return Header{}, 0, errors.New("its header line is damaged (checksum)")
	}
	var h Header
	if err := json.Unmarshal(j, &h); err != nil {
		return Header{}, 0, fmt.Errorf("its header is not JSON: %v", err)
	}
	if h.Format != Format {
		return Header{}, 0, fmt.Errorf("not an emulator state (format %q)", h.Format)
	}
	return h, int64(i + 1), nil
}

// scan reads the records of r from off on. A damaged or cut-short last
// line is left out (torn); a damaged line with good ones after it is an
// error: the log was changed by something other than cxray.
func scan(r io.ReaderAt, off int64, size int64) (recs []Record, end int64, torn bool, err error) {
	if size <= off {
		return nil, off, false, nil
	}
	buf := make([]byte, size-off)
	n, rerr := r.ReadAt(buf, off)
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		return nil, off, false, rerr
	}
	buf = buf[:n]
	end = off
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return recs, end, true, nil // no newline: cut short
		}
		j, ok := decodeLine(buf[:i])
		var rec Record
		if ok {
			ok = json.Unmarshal(j, &rec) == nil
		}
		if !ok {
			if bytes.IndexByte(buf[i+1:], '\n') < 0 {
				return recs, end, true, nil // the last line is damaged: cut short
			}
			return nil, end, false, fmt.Errorf("the record at byte %d is damaged, with records after it", end)
		}
		recs = append(recs, rec)
		end += int64(i + 1)
		buf = buf[i+1:]
	}
	return recs, end, false, nil
}

// Header returns the log's header.
func (l *Log) Header() Header { return l.hdr }

// Path returns the log file.
func (l *Log) Path() string { return l.path }

// Count is the number of records read or written through this Log.
func (l *Log) Count() int { return l.count }

// Lock takes the log's exclusive lock and returns the records other
// processes appended since this Log last looked.
func (l *Log) Lock() ([]Record, error) {
	if l.locked {
		return nil, errors.New("emulator state: Lock while locked")
	}
	if err := lockRange(l.f, lockAccess, lockExclusive, LockWait); err != nil {
		return nil, fmt.Errorf("emulator state %s: %w", l.path, err)
	}
	l.locked = true
	st, err := l.f.Stat()
	if err != nil {
		l.Unlock()
		return nil, fmt.Errorf("emulator state: %w", err)
	}
	if st.Size() < l.off {
		l.Unlock()
		return nil, fmt.Errorf("emulator state %s was cut shorter than this process has read; was it edited? `cxray emu reset` starts over", l.path)
	}
	recs, end, torn, err := scan(l.f, l.off, st.Size())
	if err != nil {
		l.Unlock()
		return nil, fmt.Errorf("emulator state %s: %w; `cxray emu reset` starts over", l.path, err)
	}
	l.off, l.torn = end, torn
	l.count += len(recs)
	return recs, nil
}

// Append writes records at the end of the log; the lock must be held. The
// remains of a cut-short record are cut off first.
func (l *Log) Append(recs ...Record) error {
	if !l.locked {
		return errors.New("emulator state: Append without the lock")
	}
	if len(recs) == 0 {
		return nil
	}
	var buf []byte
	for _, r := range recs {
		b, err := encodeLine(r)
		if err != nil {
			return err
		}
		buf = append(buf, b...)
	}
	if l.torn {
		if err := l.f.Truncate(l.off); err != nil {
			return fmt.Errorf("emulator state %s: cut off a damaged last record: %w", l.path, err)
		}
		l.torn = false
	}
	if _, err := l.f.WriteAt(buf, l.off); err != nil {
		return fmt.Errorf("emulator state %s: %w", l.path, err)
	}
	l.off += int64(len(buf))
	l.count += len(recs)
	return nil
}

// Unlock releases the exclusive lock.
func (l *Log) Unlock() error {
	if !l.locked {
		return nil
	}
	l.locked = false
	return lockRange(l.f, lockAccess, lockNone, 0)
}

// Close releases the log (and its locks).
func (l *Log) Close() error {
	if l.f == nil {
		return nil
	}
	dropLocks(l.f)
	err := l.f.Close() // closing the file description drops its OFD locks
	l.f = nil
	return err
}

// ReadLog reads a log without locking it (for listings): the header and
// every good record; a cut-short last record is left out.
func ReadLog(path string) (Header, []Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	hdr, off, err := readHeader(f)
	if err != nil {
		return Header{}, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return hdr, nil, err
	}
	recs, _, _, err := scan(f, off, st.Size())
	return hdr, recs, err
}

// InUse says whether some process has the log open (holds its user lock).
func InUse(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return lockedByOthers(f, lockUsers)
}

// RemoveLog deletes a log nobody has open; ErrInUse when somebody has.
func RemoveLog(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockRange(f, lockUsers, lockExclusive, -1); err != nil {
		if errors.Is(err, errBusy) {
			return fmt.Errorf("%s: %w by another process (a running `cxray emu serve` or `emu run`, or a command); stop it, then reset", path, ErrInUse)
		}
		return err
	}
	return removeLocked(f, path)
}

var errBusy = errors.New("locked by another process")

// lockRange sets a lock on one byte of f: lockShared, lockExclusive or
// lockNone (unlock). A conflicting lock is waited for up to wait
// (polling, so a stopped holder gives an error rather than a hang); wait <
// 0 does not wait. The locks belong to the open file (Linux OFD locks,
// lock_linux.go; Windows LockFileEx, lock_windows.go; flock elsewhere,
// lock_flock.go): two opens in one process exclude each other like two
// processes do, and closing the file drops them.
func lockRange(f *os.File, start int64, typ lockType, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := 50 * time.Microsecond
	for {
		ok, err := tryLock(f, start, typ)
		if err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if ok {
			return nil
		}
		if wait < 0 {
			return errBusy
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w for more than %v (a stopped cxray?)", errBusy, wait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}
