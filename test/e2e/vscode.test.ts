// The end-to-end suites in one process, one after the other: they share one build and one packaged .vsix,
// and never run two code-servers at once on a small CI machine.
import './inProcess.suite';
import './attached.suite';
import './firstRun.suite';
import './workspaceTrust.suite';
import './repair.suite';
import './agents.suite';
import './realFiles.suite';
