/**
 * Which queued task a run works, for the run's page. Runs started by hand
 * (`magi run`) have none; the loop appends each run it starts to its task's
 * `runs`.
 */
import { Context, Effect, Layer, Option } from "effect"

export type TaskView = { readonly id: string; readonly title: string; readonly status: string }

export class TaskOfRun extends Context.Tag("magi/web/TaskOfRun")<
  TaskOfRun,
  { readonly of: (run: string) => Effect.Effect<Option.Option<TaskView>> }
>() {
  // Until the queue exists no run has a task.
  static layer = Layer.succeed(TaskOfRun, { of: () => Effect.succeed(Option.none()) })
}
