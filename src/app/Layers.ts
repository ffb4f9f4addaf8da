/**
 * Each process's services, built in one place from the environment: the
 * owner's home, the config for the working directory, the store on the
 * backend it names, and what each command drives over it. A command provides
 * its layer inside its handler, so `magi --help` never reads a config file
 * and a broken config cannot hide the help; each listing builds only what it
 * reads, since building the rest is most of what a listing of a small home
 * costs.
 */
import * as LocalContext from "../platform/LocalContext.js"
import { Layer, Option } from "effect"
import type * as FileSystem from "@effect/platform/FileSystem"
import { MagiHome } from "../platform/MagiHome.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import { Hosts } from "../platform/Hosts.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { Notifier } from "../questions/Notifier.js"
import { AskerWait } from "../questions/AskerWait.js"
import { Leases } from "../questions/Leases.js"
import { Devices } from "../devices/Devices.js"
import { AuditLog } from "../approvals/AuditLog.js"
import { SavedRules } from "../approvals/SavedRules.js"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents } from "../agents/Agents.js"
import { TurnSlots } from "../agents/TurnSlots.js"
import { RunStore } from "../runs/Runs.js"
import { Workspaces } from "../runs/NewRun.js"
import * as GitHubForge from "../land/GitHubForge.js"
import { LandDriver } from "../land/LandDriver.js"
import { Landings } from "../land/Landings.js"
import { RunDriver } from "../runs/RunDriver.js"
import { TaskStore } from "../queue/TaskStore.js"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import { Notices } from "../daemon/Notices.js"
import { Waiter } from "../daemon/Waiter.js"
import { QueueLoop, type QueueLoopOptions } from "../daemon/QueueLoop.js"
import { SaidLoop } from "../daemon/SaidLoop.js"
import { Conductor } from "../daemon/Conductor.js"
import { Deputies } from "../daemon/Deputies.js"
import { ConductorLog } from "../daemon/ConductorLog.js"

/** `--home DIR` when given, else the owner's home from the environment. */
export const homeLayer = (home: Option.Option<string>): Layer.Layer<MagiHome> => Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.owned })

// -- questions: ask, answer, notify, init, mcp ---------------------------------

/**
 * The question store alone, over `home`: what reading the questions needs
 * (`magi answer`'s listing). The notifier, the waits and the hosts are for
 * answering.
 */
export const questionStoreLayer = (
  home: Layer.Layer<MagiHome> = MagiHome.fromEnv,
  config: Layer.Layer<MagiConfig, unknown, FileSystem.FileSystem> = MagiConfig.fromFiles()
) =>
  QuestionStore.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(config, home)),
    Layer.provideMerge(LocalContext.layer)
  )

/** Everything questions need, over `home` (the owner's, from the environment, when not given): the store and what answering adds. */
export const questionsLayer = (
  home: Layer.Layer<MagiHome> = MagiHome.fromEnv,
  config: Layer.Layer<MagiConfig, unknown, FileSystem.FileSystem> = MagiConfig.fromFiles()
) =>
  AskerWait.layer.pipe(
    // The hosts, on the same backend (one pool: the layers are shared): `magi answer ID` says when a resume waits for room.
    Layer.provideMerge(Layer.mergeAll(Notifier.layer, Hosts.layer)),
    Layer.provideMerge(questionStoreLayer(home, config))
  )

/** What deciding a tool call needs (`magi mcp`'s `approve`, `magi approvals hook`): the saved rules and the audit log over the questions. */
export const approvalDecisionLayer = () => Layer.mergeAll(SavedRules.layer, AuditLog.layer).pipe(Layer.provideMerge(questionsLayer()))

/** The saved approval rules, for `magi approvals list|rm|trust` (a broken config is warned about). */
export const approvalRulesLayer = () =>
  SavedRules.layer.pipe(
    Layer.provideMerge(Layer.merge(MagiHome.fromEnv, MagiConfig.fromFilesOrDefaults(process.cwd(), "listing approval rules"))),
    Layer.provideMerge(LocalContext.layer)
  )

// -- runs: run, runs, show, fold, pick, hosts -----------------------------------

/**
 * What listing runs needs (`magi runs`): the run and task stores, and the
 * questions for the first move to the month shelves. Not the driver, the
 * agents, their roster or the worktrees: a listing starts no turn.
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

// -- the queue: task, plan -----------------------------------------------------

/**
 * The stores `magi task` works on, over the owner's home, on the backend the
 * config names (a broken config is warned about: filing and listing need
 * none of the rest of it).
 */
export const queueLayer = (home: Layer.Layer<MagiHome> = MagiHome.fromEnv) =>
  // Hosts: a task filed by a repository's name only other hosts have is filed for them.
  Layer.mergeAll(TaskStore.layer, RunStore.layer, ConductorLog.layer, Hosts.layer, Rosters.fromFiles).pipe(
    Layer.provideMerge(QuestionStore.layer),
    Layer.provideMerge(Layer.merge(home, MagiConfig.fromFilesOrDefaults(process.cwd(), "the queue"))),
    Layer.provideMerge(LocalContext.layer)
  )

// -- the loop: serve, and web's in-process waiter ---------------------------------

/** The waiter, the queue's loop and everything they drive, over `home`. */
export const waiterLayer = (home: Layer.Layer<MagiHome>, queue: QueueLoopOptions = {}, conductor: { readonly disabled?: boolean } = {}) =>
  Layer.mergeAll(
    Waiter.layer,
    SaidLoop.layer,
    QueueLoop.layer(queue).pipe(
      Layer.provide(
        conductor.disabled === true
          ? Conductor.off
          : Layer.merge(Conductor.layer({ maxAttempts: queue.maxAttempts }), Deputies.layer)
      )
    )
  ).pipe(
    Layer.provideMerge(Landings.Default.pipe(Layer.provide(LandDriver.Default), Layer.provide(GitHubForge.layerConfigured()))),
    Layer.provideMerge(Notices.layer),
    Layer.provideMerge(runsLayer(home))
  )

// -- the page: web -----------------------------------------------------------------

/**
 * The store `magi web` serves, on the backend the config names; a broken
 * `magi.toml` in whatever directory the server was started from is warned
 * about and otherwise ignored, since it must not keep the owner from
 * answering.
 */
export const webStoreLayer = (home: Layer.Layer<MagiHome>) =>
  QuestionStore.layer.pipe(
    Layer.provideMerge(Layer.merge(home, MagiConfig.fromFilesOrDefaults(process.cwd(), "serving the page"))),
    Layer.provideMerge(LocalContext.layer)
  )

/** The paired devices on the store the config names, for `magi web pair|devices|revoke`. */
export const devicesLayer = (home: Option.Option<string>) =>
  Devices.layer.pipe(
    Layer.provide(ConfiguredStore.layer),
    Layer.provideMerge(Layer.merge(homeLayer(home), MagiConfig.fromFiles(process.cwd()))),
    Layer.provideMerge(LocalContext.layer)
  )
