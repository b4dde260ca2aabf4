package simexec

import (
	"encoding/json"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Answer is devcluster.Config.SimulatedMessages for bcs's executors: an
// update is applied at once and answered OK, every task it names
// reporting its new revision; other messages get no answer.
func Answer(data []byte) devcluster.SimulatedAnswer {
	msg, err := proto.DecodeMessage(data)
	if err != nil || msg.Type != proto.MessageUpdate || msg.Update == nil {
		return devcluster.SimulatedAnswer{}
	}
	status, _ := json.Marshal(struct {
		Revision uint64 `json:"revision"`
	}{msg.Update.Revision})
	answer := devcluster.SimulatedAnswer{TaskData: map[string][]byte{}}
	for _, t := range msg.Update.Tasks {
		answer.TaskData[t.TaskID] = status
	}
	result := proto.MessageResult{ID: msg.ID, Type: msg.Type, TaskID: msg.TaskID, OK: true}
	answer.Message, _ = result.Encode()
	return answer
}
