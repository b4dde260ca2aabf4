// Package confine says where the paths of a process manifest may lead on
// an agent: inside the directories of the instance itself,
// <${work_base_dir}>/<namespace>.<name>.<index> and the same under
// ${run_base_dir}, and where file:// packages may come from: the
// directories the operator configured. The scheduler checks a manifest's
// expanded paths with it when the manifest is submitted; the process
// executor checks them again, and then opens them through an os.Root so
// that a link cannot lead out.
//
// It is pure path logic on slash-separated absolute paths, and it
// must not import any other bcs-mesos package.
package confine
