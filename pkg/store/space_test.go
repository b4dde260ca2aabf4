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

// fillToQuota writes values of valueSize bytes, under names that start
// with prefix, until etcd refuses one, and returns the keys written and
// the refusal.
func fillToQuota(t *testing.T, s *store.Store, prefix string, valueSize int) (keys []string, refusal error) {
	t.Helper()
	value := bytes.Repeat([]byte("x"), valueSize)
	for i := range 4 * tinyQuota / len(value) {
		key := mustKey(t, store.KindTaskGroup, "default", "web", fmt.Sprintf("%s-%d", prefix, i))
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
	_, err := fillToQuota(t, s, "tg", 64<<10)
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
	// Where etcd refuses the first write depends on when bbolt grew its
	// file: the live data may then take as little as half the quota, and
	// Reclaim rightly disarms. Fill again, with smaller values, until the
	// live data alone keeps the database at the quota.
	var keys []string
	for round, size := 0, 64<<10; ; round, size = round+1, size/2 {
		written, _ := fillToQuota(t, s, fmt.Sprintf("round%d", round), size)
		keys = append(keys, written...)
		space, err := e.Reclaim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if space.NoSpace {
			t.Logf("the alarm stayed after %d rounds of filling: %+v", round+1, space)
			break
		}
		if space.Used() >= 0.9 {
			t.Fatalf("Reclaim disarmed the alarm with the database at %.0f %% of its quota: %+v", 100*space.Used(), space)
		}
		if round == 6 {
			t.Fatalf("after %d rounds of filling the quota, Reclaim still disarmed the alarm: %+v", round+1, space)
		}
	}
	// etcd takes deletes while the alarm is raised. How far past the
	// quota the writes got depends on when bbolt grew its file: keep
	// few.
	for _, key := range keys[4:] {
		if err := s.Delete(ctx, key, 0); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
	}
	space, err := e.Reclaim(ctx)
	if err != nil {
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
