package store

import (
	"fmt"
	"strings"
	"testing"
)

// A page is decoded on several goroutines and handed over in key order;
// of several corrupt values, the first in key order is reported.
func TestDecodePageKeepsOrder(t *testing.T) {
	type value struct{ N int }
	page := make([]Entry, 10*minDecodesPerWorker)
	for i := range page {
		page[i] = Entry{Key: fmt.Sprintf("taskgroups/ns/app/%04d", i), Value: fmt.Appendf(nil, `{"N":%d}`, i), Revision: int64(i + 1)}
	}
	objects, err := decodePage[value](page)
	if err != nil {
		t.Fatal(err)
	}
	for i, obj := range objects {
		if obj.Key != page[i].Key || obj.Value.N != i || obj.Revision != int64(i+1) {
			t.Fatalf("object %d = %+v, want key %s, N %d, revision %d", i, obj, page[i].Key, i, i+1)
		}
	}
	page[70].Value, page[41].Value = []byte("{not json"), []byte(`{"N":"text"}`)
	if _, err := decodePage[value](page); err == nil || !strings.Contains(err.Error(), page[41].Key) {
		t.Fatalf("decodePage with values 41 and 70 corrupt = %v, want the error of %s", err, page[41].Key)
	}
}
