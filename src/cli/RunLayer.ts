/**
 * The services `magi run`, `magi runs`, `magi show` and `magi serve` run
 * against: the questions layer plus runs, agents and the roster, and the
 * driver that sets runs up and runs their turns over them.
 */
import * as LocalContext from "../platform/LocalContext.js"
import { Layer } from "effect"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents } from "../agents/Agents.js"
import { TurnSlots } from "../agents/TurnSlots.js"
import { Leases } from "../questions/Lease.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import { Notifier } from "../questions/Notifier.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { RunStore } from "../runs/Runs.js"
import { Workspaces } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import { TaskStore } from "../queue/TaskStore.js"
import { Hosts } from "../platform/Hosts.js"

/**
 * What listing runs needs (`magi runs`): the run and task stores, and the
 * questions for the first move to the month shelves. Not the driver, the
 * agents, their roster or the worktrees: building those is most of what a
 * `magi runs` on a small home costs, and a listing starts no turn.
 */
export const runListingLayer = (home: Layer.Layer<MagiHome> = MagiHome.fromEnv) =>
  Layer.mergeAll(RunStore.layer, TaskStore.layer).pipe(
    Layer.provideMerge(QuestionStore.layer),
    Layer.provideMerge(Layer.mergeAll(MagiConfig.fromFiles(), home)),
    Layer.provideMerge(LocalContext.layer)
  )

/** Everything a run needs, over `home` (the owner's, from the environment, when not given): the listing's stores and the driver over them. */
export const runsLayer = (home: Layer.Layer<MagiHome> = MagiHome.fromEnv) =>
  Layer.mergeAll(CompetitionDriver.Default, VerifyDriver.Default).pipe(
    Layer.provideMerge(RunDriver.layer),
    Layer.provideMerge(Layer.mergeAll(Agents.layer, Leases.layer, Workspaces.git, Hosts.layer)),
    Layer.provideMerge(Layer.mergeAll(Notifier.layer, Rosters.fromFiles, TurnSlots.layer)),
    Layer.provideMerge(runListingLayer(home))
  )
