package apiv1

// ErrorBody is the one error shape of the API:
//
//	{"error":{"code":"InvalidArgument","message":"…","details":["spec.instance: must be ≥ 0"]}}
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error: its class, its message, and each field
// problem. Details is always a list, empty when the error has no field
// problems, so clients read one shape.
type ErrorDetail struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}
