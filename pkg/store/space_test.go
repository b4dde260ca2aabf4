package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

const tinyQuota = 2 << 20

// fillToQuota writes 64 KiB values until etcd refuses one, and returns
// the keys written and the refusal.
func fillToQuota(t *testing.T, s *store.Store) (keys []string, refusal error) {
	t.Helper()
	value := bytes.Repeat([]byte("x"), 64<<10)
	for i := range 4 * tinyQuota / len(value) {
		key := mustKey(t, store.KindTaskGroup, "default", "web", fmt.Sprintf("tg-%d", i))
		if _, err := s.Put(context.Background(), key, value); err != nil {
			return keys, err
		}
		keys = append(keys, key)
	}
	t.Fatalf("etcd took %d KiB with a quota of %d KiB", 4*tinyQuota>>10, tinyQuota>>10)
	return nil, nil
}

// etcd's quota (--quota-backend-bytes): a write that would take the
// database past it is refused, etcd raises the NOSPACE alarm and refuses
// every write after it; the store says so in its own class, with the way
// out, and Space shows the alarm.
func TestWriteOverQuotaIsNoSpace(t *testing.T) {
	e := startEmbedded(t, t.TempDir(), store.WithQuota(tinyQuota))
	s := openStore(t, e)
	_, err := fillToQuota(t, s)
	if !errors.Is(err, store.ErrNoSpace) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("write over the quota: %v, want ErrNoSpace (an ErrUnavailable)", err)
	}
	for _, says := range []string{"quota", "database space exceeded", "compacted, defragmented", "alarm disarmed"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("write over the quota: %q does not say %q", err, says)
		}
	}
	_, err = s.Put(context.Background(), mustKey(t, store.KindTaskGroup, "default", "web", "small"), []byte("1"))
	if !errors.Is(err, store.ErrNoSpace) {
		t.Errorf("a small write once the alarm is raised: %v, want ErrNoSpace", err)
	}
	space, err := s.Space(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !space.NoSpace || space.Quota != tinyQuota || space.Size == 0 || space.Used() < 0.5 {
		t.Errorf("Space = %+v, want the NOSPACE alarm, quota %d and the file's size", space, tinyQuota)
	}
}

// Reclaim frees what history holds and lets writes in again; when the live
// data alone fills the quota it leaves the alarm raised.
func TestReclaimDisarmsOnlyWhenRoomWasMade(t *testing.T) {
	e := startEmbedded(t, t.TempDir(), store.WithQuota(tinyQuota))
	s := openStore(t, e)
	ctx := context.Background()
	keys, _ := fillToQuota(t, s)

	space, err := e.Reclaim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !space.NoSpace {
		t.Fatalf("Reclaim with the quota full of live data disarmed the alarm: %+v", space)
	}
	// etcd takes deletes while the alarm is raised. How far past the
	// quota the writes got depends on when bbolt grew its file: keep
	// few.
	for _, key := range keys[4:] {
		if err := s.Delete(ctx, key, 0); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
	}
	if space, err = e.Reclaim(ctx); err != nil {
		t.Fatal(err)
	}
	if space.NoSpace || space.Used() >= 0.9 {
		t.Fatalf("Reclaim after all but 4 keys were deleted: %+v, want the alarm disarmed below 90 %% of the quota", space)
	}
	if _, err := s.Put(ctx, mustKey(t, store.KindTaskGroup, "default", "web", "after"), []byte("1")); err != nil {
		t.Fatalf("write after Reclaim: %v", err)
	}
}

func TestEmbeddedQuotaMustBePositive(t *testing.T) {
	_, err := store.StartEmbedded(context.Background(), t.TempDir(), store.WithQuota(0))
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "quota") {
		t.Fatalf("StartEmbedded with a zero quota: %v, want ErrInvalidArgument naming the quota", err)
	}
}
