package nvconf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/internal/clock"
)

// An NV write changes several TLVs one access at a time, and the firmware
// offers no way to make them one transaction. Two things keep that safe:
//
//   - a cross-process lock per adapter around every read-modify-write,
//     so two writers of one TLV never interleave their read and write
//     (the second re-reads under the lock and builds on the first);
//   - a journal entry, written before the first TLV and removed after the
//     last is verified, so that a write cut short (a kill, a crash, a
//     power loss) is found by the next run, which can finish it or roll it
//     back from the backup taken first.

// StateDir is where cxray keeps state between runs: $XDG_STATE_HOME/cxray,
// else ~/.local/state/cxray.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "cxray"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory (%v); set XDG_STATE_HOME", err)
	}
	return filepath.Join(home, ".local", "state", "cxray"), nil
}

// LockDir holds the NV locks of real adapters (keys "pci-..."): a
// directory only root can enter (/run/cxray/nv-locks on Linux), because
// only root may write an adapter's NV configuration (config-space writes,
// /dev/fwctl) and any user who can open a lock file can flock it, holding
// every root writer off. An emulated adapter's NV configuration is its
// user's (emu/state), and so is its lock: it lives in that user's state
// directory (StateDir()/nv-locks). Empty (other platforms, which have no
// real adapters to write): the state directory for every key.
var LockDir = defaultLockDir

// LockError says the NV lock was not had in time: another process holds
// it (another cxray writing the same adapter's NV configuration, or any
// process that took the lock file).
type LockError struct {
	Key  string
	Path string // the lock file
	Wait time.Duration
	Err  error
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another process holds the NV lock of %s (%s): waited %s for it; "+
		"let that process finish (another cxray changing this adapter's NV configuration: fuser -v %s shows it), then run this again",
		e.Key, e.Path, e.Wait.Round(time.Millisecond), e.Path)
}

func (e *LockError) Unwrap() error { return e.Err }

// LockPath is the lock file of the adapter key names.
func LockPath(key string) (string, error) {
	if LockDir != "" && strings.HasPrefix(key, "pci-") {
		return filepath.Join(LockDir, key+".lock"), nil
	}
	d, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "nv-locks", key+".lock"), nil
}

// Lock takes the NV lock of an adapter (key names it: see KeyFor),
// waiting until ctx ends. The returned function releases it; the kernel
// releases it too if the process dies.
func Lock(ctx context.Context, key string) (func(), error) {
	path, err := LockPath(key)
	if err != nil {
		return nil, fmt.Errorf("NV lock: %w", err)
	}
	f, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("NV lock %s: %w", path, err)
	}
	start := time.Now()
	for wait := time.Millisecond; ; wait = min(wait*2, 50*time.Millisecond) {
		err := tryFlock(f)
		if err == nil {
			return func() { unflock(f); f.Close() }, nil
		}
		if !errors.Is(err, errWouldBlock) {
			f.Close()
			return nil, fmt.Errorf("NV lock %s: %w", path, err)
		}
		if err := (clock.Real{}).Sleep(ctx, wait); err != nil {
			f.Close()
			return nil, &LockError{Key: key, Path: path, Wait: time.Since(start), Err: err}
		}
	}
}

// openLockFile opens (creating it if need be) a lock file in a directory
// of this user's alone: the directory is made 0700 and refused when
// another user owns it or may write it (a directory left by an older cxray
// in /tmp, or made by someone else), and the file is 0600 and never
// followed through a symbolic link.
func openLockFile(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w: changing an adapter's NV configuration needs root", err)
		}
		return nil, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w: changing an adapter's NV configuration needs root", err)
	}
	return f, err
}

// KeyFor names an adapter for its NV lock and journal. The NV
// configuration belongs to the adapter, not to one PCI function, so the
// function number is left out (0000:03:00.1 -> pci-0000_03_00); direct
// access and fwctl reach the same adapter. An emulated adapter is named
// by its scenario and address.
func KeyFor(backend dev.Backend, name, bdf string) string {
	kind := "pci"
	if backend == dev.BackendEmulator {
		scen, _, _ := strings.Cut(name, "@")
		kind, bdf = "emu", scen+"@"+bdf
	}
	if i := strings.LastIndexByte(bdf, '.'); i > 0 && i == len(bdf)-2 {
		bdf = bdf[:i]
	}
	r := strings.NewReplacer("/", "_", ":", "_", "@", "_", " ", "_", ".", "_")
	return kind + "-" + r.Replace(bdf)
}

// JournalEntry is an NV write in progress.
type JournalEntry struct {
	Key     string    `json:"key"`
	Device  string    `json:"device"`
	Op      string    `json:"op"` // set, reset, restore, recover
	Started time.Time `json:"started"`
	// Backup is the file written before the first change.
	Backup string `json:"backup"`
	// Writes are the TLVs as they are meant to end up; Resets the types
	// meant to return to their defaults (All: the whole area).
	Writes []RawTLV  `json:"writes,omitempty"`
	Resets []uint32  `json:"resets,omitempty"`
	All    bool      `json:"all,omitempty"`
	PID    int       `json:"pid"`
	Host   string    `json:"host,omitempty"`
	Tool   string    `json:"tool,omitempty"`
	Format string    `json:"format"`
	Done   time.Time `json:"-"`
}

const journalFormat = "cxray-nv-journal-1"

// Journal is the directory of journal entries, one per adapter.
type Journal struct{ Dir string }

// DefaultJournal is the journal in the state directory.
func DefaultJournal() (Journal, error) {
	d, err := StateDir()
	if err != nil {
		return Journal{}, err
	}
	return Journal{Dir: filepath.Join(d, "journal")}, nil
}

func (j Journal) path(key string) string { return filepath.Join(j.Dir, key+".json") }

// Begin records a write about to start. It is on disk (fsynced) before
// Begin returns, so the first TLV write cannot come before it.
func (j Journal) Begin(e *JournalEntry) error {
	if err := os.MkdirAll(j.Dir, 0o700); err != nil {
		return fmt.Errorf("NV journal: %w; nothing was written", err)
	}
	e.Format, e.PID = journalFormat, os.Getpid()
	e.Host, _ = os.Hostname()
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(j.path(e.Key), append(b, '\n')); err != nil {
		return fmt.Errorf("NV journal: %w; nothing was written", err)
	}
	return nil
}

// put writes an entry back as it was read (a recover that changed nothing
// restores the entry it meant to resolve).
func (j Journal) put(e *JournalEntry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(j.path(e.Key), append(b, '\n'))
}

// Path is the file of an adapter's entry.
func (j Journal) Path(key string) string { return j.path(key) }

// Done removes the entry of a write that completed and was verified.
func (j Journal) Done(key string) error {
	err := os.Remove(j.path(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Pending returns the entry of an interrupted write on the adapter, or nil.
func (j Journal) Pending(key string) (*JournalEntry, error) {
	b, err := os.ReadFile(j.path(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("NV journal: %w", err)
	}
	var e JournalEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Format != journalFormat {
		return nil, fmt.Errorf("NV journal %s is not cxray's or is damaged (%v); look at it, then delete it", j.path(key), err)
	}
	return &e, nil
}

// InterruptedError says an earlier write was cut short: the adapter may
// hold some TLVs new and some old.
type InterruptedError struct {
	Entry *JournalEntry
	Names []string
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("an interrupted %s (started %s, process %d) left these TLVs possibly half applied: %s; finish it with 'cxray config recover --finish -d %s' or roll it back with 'cxray config recover --rollback -d %s' (backup %s)",
		e.Entry.Op, e.Entry.Started.Format(time.RFC3339), e.Entry.PID, strings.Join(e.Names, ", "), e.Entry.Device, e.Entry.Device, e.Entry.Backup)
}

// Interrupted describes a pending entry with the TLV names of db.
func Interrupted(e *JournalEntry, db *DB) *InterruptedError {
	ie := &InterruptedError{Entry: e}
	for _, w := range e.Writes {
		ie.Names = append(ie.Names, db.DescribeType(w.Header.Type))
	}
	for _, t := range e.Resets {
		ie.Names = append(ie.Names, db.DescribeType(t)+" (reset)")
	}
	if e.All {
		ie.Names = append(ie.Names, "the whole NV area (reset)")
	}
	return ie
}

// CheckInterrupted looks in the default journal for an interrupted write
// on the adapter key names, and describes it with the TLV names of db
// (nil when there is none). A journal entry is a write in progress while
// its writer holds the NV lock, and interrupted only once the lock is
// free: so the lock is taken around the look, waiting until ctx ends; a
// lock not had by then is returned as the *LockError.
func CheckInterrupted(ctx context.Context, key string, db *DB) (*InterruptedError, error) {
	j, err := DefaultJournal()
	if err != nil {
		return nil, err
	}
	unlock, err := Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	e, err := j.Pending(key)
	if err != nil || e == nil {
		return nil, err
	}
	return Interrupted(e, db), nil
}
