package nvconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cxray/cxray/internal/atomicfile"
)

// Change is one NV change as Commit performs it: worked out again under
// the adapter's lock from what the device holds then, backed up, recorded
// in the journal, written and verified.
type Change struct {
	// Op names the change in the journal: set, reset, restore, recover.
	Op string
	// Key names the adapter (KeyFor), Device the name the user gave.
	Key, Device string
	// Shown is the change in words as the user confirmed it; when
	// Confirmed, a replan that says something else is refused (another
	// writer changed the TLVs meanwhile). Unconfirmed (--yes) changes
	// build on whatever the device holds.
	Shown     []string
	Confirmed bool
	// Replan works the change out under the lock: its words, the TLV
	// instances it touches (for the backup) and its journal entry.
	Replan func(ctx context.Context) (shown []string, changing []Instance, entry *JournalEntry, err error)
	// Apply performs the replanned change.
	Apply func(ctx context.Context) error
}

// BackupOptions say where Commit writes the backup it takes first.
type BackupOptions struct {
	// Path is the file; "" is a new file in BackupDir().
	Path string
	// Info are comment lines for the file (device, time, database).
	Info BackupInfo
	// Tool is the cxray version recorded in the journal.
	Tool string
}

// ConflictError says the TLVs changed between the question and the write.
type ConflictError struct{ Device string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the NV configuration of %s changed while you were asked (another tool wrote it); nothing was written; run the command again to see the change as it is now", e.Device)
}

// BackupError is a backup that could not be written: nothing was.
type BackupError struct {
	Path string
	Err  error
}

func (e *BackupError) Error() string {
	return fmt.Sprintf("cannot write the backup %s (%v); give a writable --backup FILE or $%s; nothing was written", e.Path, e.Err, EnvBackupDir)
}

func (e *BackupError) Unwrap() error { return e.Err }

// ApplyTime bounds the writes of one change once they have started.
const ApplyTime = 30 * time.Second

// Commit performs a change: lock, replan, back up, journal, write,
// verify, clear the journal. The writes run to the end even when ctx is
// cancelled (a signal): stopping between an invalidate and a write would
// leave a TLV at its default. It returns the backup's path.
func (s *Session) Commit(ctx context.Context, c Change, b BackupOptions) (string, error) {
	unlock, err := Lock(ctx, c.Key)
	if err != nil {
		return "", err
	}
	defer unlock()
	s.ForgetAll()
	shown, changing, entry, err := c.Replan(ctx)
	if err != nil {
		return "", err
	}
	if c.Confirmed && !slices.Equal(shown, c.Shown) {
		return "", &ConflictError{Device: c.Device}
	}
	path, err := s.writeBackup(ctx, c.Device, changing, b)
	if err != nil {
		return "", err
	}
	crashPoint("backup")
	entry.Key, entry.Device, entry.Op, entry.Backup, entry.Started, entry.Tool = c.Key, c.Device, c.Op, path, time.Now().UTC(), b.Tool
	j, err := DefaultJournal()
	if err != nil {
		return "", err
	}
	if err := j.Begin(entry); err != nil {
		return "", err
	}
	crashPoint("journal")
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ApplyTime)
	defer cancel()
	if err := c.Apply(wctx); err != nil {
		return path, &WriteError{Err: err, Backup: path, Device: c.Device}
	}
	return path, j.Done(entry.Key)
}

// WriteError is a change that failed after it started: the journal keeps
// it, so the next run offers to finish or roll it back.
type WriteError struct {
	Err            error
	Backup, Device string
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%v (backup: %s; 'cxray config recover -d %s' finishes or rolls back the change)", e.Err, e.Backup, e.Device)
}

func (e *WriteError) Unwrap() error { return e.Err }

func (s *Session) writeBackup(ctx context.Context, device string, changing []Instance, b BackupOptions) (string, error) {
	tlvs, partial, err := s.BackupTLVs(ctx, changing)
	if err != nil {
		return "", err
	}
	path := b.Path
	if path == "" {
		dir, err := BackupDir()
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", &BackupError{Path: dir, Err: err}
		}
		path = BackupPath(dir, device, time.Now())
	}
	info := b.Info
	if partial {
		info.Lines = append(info.Lines, "partial: the firmware cannot list its NV area (MNVGN); this holds the TLVs the write changed")
	}
	if path == "-" {
		return "", &BackupError{Path: path, Err: errors.New("'-' is not a file")}
	}
	if err := atomicfile.Write(path, WriteBackup(tlvs, s.DB, s.HeaderCodec(), info)); err != nil {
		return "", &BackupError{Path: path, Err: err}
	}
	return path, nil
}

// Recovery is what finishing or rolling back an interrupted write does.
type Recovery struct {
	Writes []RawTLV
	Resets []uint32
	All    bool
}

// PlanRecover works out how to finish the interrupted write e, or, with
// rollback, how to put the TLVs it touched back as backup holds them.
func PlanRecover(e *JournalEntry, rollback bool, backup []RawTLV) Recovery {
	if !rollback {
		return Recovery{Writes: e.Writes, Resets: e.Resets, All: e.All}
	}
	touched := map[uint32]bool{}
	for _, w := range e.Writes {
		touched[w.Header.Type] = true
	}
	for _, t := range e.Resets {
		touched[t] = true
	}
	var r Recovery
	inBackup := map[uint32]bool{}
	for _, b := range backup {
		if touched[b.Header.Type] || e.All {
			r.Writes = append(r.Writes, b)
			inBackup[b.Header.Type] = true
		}
	}
	for t := range touched {
		if !inBackup[t] {
			r.Resets = append(r.Resets, t)
		}
	}
	slices.Sort(r.Resets)
	return r
}

// Recover performs a recovery: resets first, then writes.
func (s *Session) Recover(ctx context.Context, r Recovery) error {
	if r.All {
		if err := s.InvalidateAll(ctx); err != nil {
			return err
		}
	}
	for _, t := range r.Resets {
		if err := s.InvalidateType(ctx, t); err != nil {
			return err
		}
	}
	for _, w := range r.Writes {
		if err := s.WriteRaw(ctx, w); err != nil {
			return err
		}
	}
	return nil
}
