/**
 * Every kind of record a magi home keeps, as one list: what `magi store
 * migrate` copies, kind after kind.
 *
 * Why here, in `src/store/`: the list has to import every domain (each kind's
 * options live with the kind: questions, the queue, runs, chats, the
 * daemon's notices and deputies), and `src/platform/`, where the copy engine
 * is, must not. Not in `src/cli/` either: the list is about the store, not
 * the command line, and the doctor or the web may want it too (a "what is
 * in this store" count), without importing a command.
 *
 * A kind that moves onto `StoreBackend.records` is already here by its
 * options; a new kind of record is added here, or it is not migrated. The
 * conductor's decisions log (`conduct/decisions.jsonl`) is one appended
 * file, not records in a record store: it joins the list when it becomes a
 * kind of its own.
 */
import * as StoreMigration from "../store/StoreMigration.js"
import { savedRuleRecords } from "../approvals/SavedRules.js"
import { chatRecords } from "../chat/ChatRecords.js"
import { deputyRecords } from "../daemon/Deputies.js"
import { noticeRecords } from "../daemon/Notices.js"
import { panelDirName, questionRecords } from "../questions/QuestionStore.js"
import { announcementRecords } from "../questions/Announcements.js"
import { taskRecords } from "../queue/TaskStore.js"
import { runRecords } from "../runs/Runs.js"
import { deviceRecords } from "../devices/Devices.js"

/** The kinds, questions first: they are what a home mostly holds, and what the owner misses first. */
export const kinds: ReadonlyArray<StoreMigration.MigrationKind> = [
  // A question's panel is its own files, copied with it.
  StoreMigration.kindOf(questionRecords, { filesDir: panelDirName }),
  // Whether each question was announced: an open question moved to the new store is not announced again.
  StoreMigration.kindOf(announcementRecords),
  StoreMigration.kindOf(taskRecords),
  StoreMigration.kindOf(runRecords),
  StoreMigration.kindOf(chatRecords),
  StoreMigration.kindOf(noticeRecords),
  StoreMigration.kindOf(deputyRecords),
  // Paired phones stay paired on the new store; pairing codes live minutes and are not copied.
  StoreMigration.kindOf(deviceRecords),
  StoreMigration.kindOf(savedRuleRecords)
]
