package nvconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/nvconf/rawfile"
)

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

// CommitOptions say which adapter a Commit writes and where its backup
// goes.
type CommitOptions struct {
	// Key names the adapter (KeyFor), Device the name the user gave.
	Key, Device string
	// Confirmed says the user was shown the plan's Describe and said yes:
	// a replan that describes something else is then refused (another
	// writer changed the TLVs meanwhile). Unconfirmed (--yes) plans build
	// on whatever the device holds.
	Confirmed bool
	Backup    BackupOptions
}

// Commit performs a plan on the adapter of s: lock, plan again, back up,
// journal, write, verify, clear the journal. The writes run to the end
// even when ctx is cancelled (a signal): stopping between an invalidate
// and a write would leave a TLV at its default. It returns the plan as
// performed (planned again under the lock, of the same kind as p) and the
// backup's path.
func Commit(ctx context.Context, s *Session, p Plan, o CommitOptions) (Plan, string, error) {
	unlock, err := Lock(ctx, o.Key)
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	s.ForgetAll()
	final, err := p.replan(ctx, s)
	if err != nil {
		return nil, "", err
	}
	if o.Confirmed && !slices.Equal(final.Describe(), p.Describe()) {
		return nil, "", &ConflictError{Device: o.Device}
	}
	path, err := s.commit(ctx, final, o)
	return final, path, err
}

func (s *Session) commit(ctx context.Context, p Plan, o CommitOptions) (string, error) {
	changing, entry := p.touches(s), p.entry(s)
	before, path, err := s.writeBackup(ctx, o.Device, changing, o.Backup)
	if err != nil {
		return "", err
	}
	crashPoint("backup")
	entry.Key, entry.Device, entry.Op, entry.Backup, entry.Started, entry.Tool = o.Key, o.Device, p.Op(), path, time.Now().UTC(), o.Backup.Tool
	j, err := DefaultJournal()
	if err != nil {
		return "", err
	}
	// A recover replaces the entry it resolves; kept here, it is put back
	// if the recover changes nothing.
	prior, err := j.Pending(o.Key)
	if err != nil {
		return "", err
	}
	if err := j.Begin(entry); err != nil {
		return "", err
	}
	crashPoint("journal")
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ApplyTime)
	defer cancel()
	if err := p.apply(wctx, s); err != nil {
		// The firmware refused a write, or the verify failed. Whether the
		// change is half applied is read back, not guessed: when the
		// adapter holds what the backup holds, nothing changed and the
		// entry is dropped (or the earlier one put back), so no later
		// write is blocked by a change that never happened.
		//
		// A change refused half-way (the firmware took some TLVs and
		// refused the next) is rolled back at once from the backup just
		// taken, the way 'config recover --rollback' would: the TLVs are
		// then all old. Only when that fails too does the entry stay, for
		// 'config recover'.
		held := s.holdsBackup(wctx, changing, before)
		rolledBack := false
		var rollErr error
		if !held {
			var back Recovery
			if back, rollErr = s.stillToDo(wctx, PlanRecover(entry, true, before)); rollErr == nil {
				rollErr = s.Recover(wctx, back)
			}
			held = rollErr == nil && s.holdsBackup(wctx, changing, before)
			if rollErr == nil && !held {
				rollErr = errors.New("the adapter still differs from the backup after it")
			}
			rolledBack = held
		}
		if held {
			re := &RefusedError{Err: err, Backup: path, Device: o.Device, Journal: j.path(o.Key), RolledBack: rolledBack}
			if prior != nil {
				re.Prior, re.JournalErr = prior, j.put(prior)
				return path, re
			}
			re.JournalErr = j.Done(o.Key)
			return path, re
		}
		return path, &WriteError{Err: err, Backup: path, Device: o.Device, Journal: j.path(o.Key), RollbackErr: rollErr}
	}
	return path, j.Done(entry.Key)
}

// holdsBackup reads the TLVs a backup took again and says whether the
// adapter still holds them as they were (type, version and data).
func (s *Session) holdsBackup(ctx context.Context, changing []Instance, before []RawTLV) bool {
	s.ForgetAll()
	now, _, err := s.BackupTLVs(ctx, changing)
	s.ForgetAll()
	if err != nil {
		return false
	}
	return rawfile.Compare(before, now).Empty()
}

// WriteError is a change that failed after it started and left the
// adapter changed (read back): the journal keeps it, so the next run
// offers to finish or roll it back.
type WriteError struct {
	Err            error
	Backup, Device string
	// Journal is the entry's file.
	Journal string
	// RollbackErr is why rolling the change back from the backup at once
	// failed.
	RollbackErr error
}

func (e *WriteError) Error() string {
	roll := ""
	if e.RollbackErr != nil {
		roll = fmt.Sprintf("; rolling it back at once failed too (%v)", e.RollbackErr)
	}
	return fmt.Sprintf("%v (the adapter now differs from the backup %s, so the change may be half applied%s; 'cxray config recover -d %s' finishes or rolls it back; %s)", e.Err, e.Backup, roll, e.Device, journalAdvice(e.Journal, e.Device))
}

func (e *WriteError) Unwrap() error { return e.Err }

// journalAdvice says which journal file blocks further writes, and when
// removing it by hand is safe.
func journalAdvice(path, device string) string {
	return fmt.Sprintf("until then %s blocks every NV write to %s; remove it by hand only once 'cxray config query -d %s' shows the configuration you want", path, device, device)
}

// RefusedError is a change whose write was refused (or failed to verify)
// while the adapter, read back, still holds the configuration of the
// backup taken first: nothing changed, and the journal holds no entry for
// it (Prior: the interrupted write a recover tried to resolve is pending
// again).
type RefusedError struct {
	Err            error
	Backup, Device string
	Prior          *JournalEntry
	Journal        string
	// JournalErr is a failure to update the journal file.
	JournalErr error
	// RolledBack says the firmware had taken part of the change, and
	// cxray wrote the backup's TLVs back before reading the adapter again.
	RolledBack bool
}

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("%v; read back, %s holds the configuration it held before (backup %s): nothing was changed", e.Err, e.Device, e.Backup)
	if e.RolledBack {
		s = fmt.Sprintf("%v; the TLVs written before the refusal were rolled back from the backup %s, and read back, %s holds the configuration it held before: nothing was changed", e.Err, e.Backup, e.Device)
	}
	switch {
	case e.JournalErr != nil:
		s += fmt.Sprintf("; but the journal %s could not be updated (%v): %s", e.Journal, e.JournalErr, journalAdvice(e.Journal, e.Device))
	case e.Prior != nil:
		s += fmt.Sprintf("; the interrupted %s of %s is still pending (%s)", e.Prior.Op, e.Prior.Started.Format(time.RFC3339), journalAdvice(e.Journal, e.Device))
	default:
		s += ", and there is nothing to recover"
	}
	return s
}

func (e *RefusedError) Unwrap() error { return e.Err }

func (s *Session) writeBackup(ctx context.Context, device string, changing []Instance, b BackupOptions) ([]RawTLV, string, error) {
	tlvs, partial, err := s.BackupTLVs(ctx, changing)
	if err != nil {
		return nil, "", err
	}
	path := b.Path
	if path == "" {
		dir, err := BackupDir()
		if err != nil {
			return nil, "", err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, "", &BackupError{Path: dir, Err: err}
		}
		path = BackupPath(dir, device, time.Now())
	}
	info := b.Info
	if partial {
		info.Lines = append(info.Lines, "partial: the firmware cannot list its NV area (MNVGN); this holds the TLVs the write changed")
	}
	if path == "-" {
		return nil, "", &BackupError{Path: path, Err: errors.New("'-' is not a file")}
	}
	if err := atomicfile.Write(path, WriteBackup(tlvs, s.DB, s.HeaderCodec(), info)); err != nil {
		return nil, "", &BackupError{Path: path, Err: err}
	}
	return tlvs, path, nil
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

// stillToDo drops from r what the adapter holds already: a write stored
// as it is, a reset of a type not stored. A roll-back after a refusal
// then touches only the TLVs the firmware took, not the one it refused
// (which it would refuse again). Without an NV walk (MNVGN) writes are
// checked one by one and resets kept.
func (s *Session) stillToDo(ctx context.Context, r Recovery) (Recovery, error) {
	s.ForgetAll()
	out := Recovery{All: r.All}
	have, err := s.Walk(ctx)
	if err != nil {
		var nv *NVError
		if !errors.As(err, &nv) {
			return r, err
		}
		out.Resets = r.Resets
		for _, w := range r.Writes {
			if in, ok := s.DB.InstanceOf(w.Header.Type); ok {
				if it, err := s.Read(ctx, in, ModeNext); err == nil && !it.Absent && it.Header.Version == w.Header.Version && slices.Equal(it.Data, w.Data) {
					continue
				}
			}
			out.Writes = append(out.Writes, w)
		}
		return out, nil
	}
	stored := map[uint32]RawTLV{}
	for _, h := range have {
		stored[h.Header.Type] = h
	}
	for _, w := range r.Writes {
		if h, ok := stored[w.Header.Type]; !ok || !h.Equal(w) || r.All {
			out.Writes = append(out.Writes, w)
		}
	}
	for _, t := range r.Resets {
		if _, ok := stored[t]; ok {
			out.Resets = append(out.Resets, t)
		}
	}
	return out, nil
}

// Holds says whether the adapter already holds what r leaves: each write
// stored as it is (type, version, data), each reset type not stored, and
// with All nothing but the writes. A recovery it holds has nothing to
// write. Without an NV walk (MNVGN) only writes can be checked: a
// recovery with resets is then never held.
func (s *Session) Holds(ctx context.Context, r Recovery) (bool, error) {
	s.ForgetAll()
	have, err := s.Walk(ctx)
	if err != nil {
		var nv *NVError
		if !errors.As(err, &nv) {
			return false, err
		}
		if r.All || len(r.Resets) > 0 {
			return false, nil
		}
		for _, w := range r.Writes {
			in, ok := s.DB.InstanceOf(w.Header.Type)
			if !ok {
				return false, nil
			}
			it, err := s.Read(ctx, in, ModeNext)
			if err != nil {
				return false, err
			}
			if it.Absent || it.Header.Version != w.Header.Version || !slices.Equal(it.Data, w.Data) {
				return false, nil
			}
		}
		return true, nil
	}
	stored := map[uint32]RawTLV{}
	for _, h := range have {
		stored[h.Header.Type] = h
	}
	for _, w := range r.Writes {
		h, ok := stored[w.Header.Type]
		if !ok || !h.Equal(w) {
			return false, nil
		}
	}
	for _, t := range r.Resets {
		if _, ok := stored[t]; ok {
			return false, nil
		}
	}
	if r.All && len(have) != len(r.Writes) {
		return false, nil
	}
	return true, nil
}
