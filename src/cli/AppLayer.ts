/**
 * The services a command runs against, built from the environment: the owner's
 * home, the config layers for the working directory, the store, the notifier
 * and the waits. Provided inside each command's handler, so `magi --help`
 * never reads a config file and a broken config cannot hide the help.
 */
import * as LocalContext from "../platform/LocalContext.js"
import { Layer } from "effect"
import type * as FileSystem from "@effect/platform/FileSystem"
import { MagiHome } from "../platform/MagiHome.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { Notifier } from "../questions/Notifier.js"
import { Waits } from "../questions/Waits.js"
import { Hosts } from "../platform/Hosts.js"

/**
 * The question store alone, over `home`: what reading the questions needs
 * (`magi answer`'s listing). The notifier, the waits and the hosts are for
 * answering; building them is most of what a listing of a small home costs.
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
  Waits.layer.pipe(
    // The hosts, on the same backend (one pool: the layers are shared): `magi answer ID` says when a resume waits for room.
    Layer.provideMerge(Layer.mergeAll(Notifier.layer, Hosts.layer)),
    Layer.provideMerge(questionStoreLayer(home, config))
  )
