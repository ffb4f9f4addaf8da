/**
 * The services `magi run`, `magi runs`, `magi show` and `magi serve` run
 * against: the questions layer plus runs, agents and the roster.
 */
import * as LocalContext from "../LocalContext.js"
import { Layer } from "effect"
import { Rosters } from "../AgentRoster.js"
import { Agents } from "../Agents.js"
import { Leases } from "../Lease.js"
import { MagiConfig } from "../MagiConfig.js"
import { MagiHome } from "../MagiHome.js"
import { Notifier } from "../Notifier.js"
import { QuestionStore } from "../QuestionStore.js"
import { RunStore } from "../Runs.js"

/** Everything a run needs, over `home` (the owner's, from the environment, when not given). */
export const runsLayer = (home: Layer.Layer<MagiHome> = MagiHome.fromEnv) =>
  Layer.mergeAll(RunStore.layer, Agents.layer, Leases.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(QuestionStore.layer, Notifier.layer, Rosters.fromFiles)),
    Layer.provideMerge(Layer.mergeAll(MagiConfig.fromFiles(), home)),
    Layer.provideMerge(LocalContext.layer)
  )
