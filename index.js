"use strict";
// The package's entry, `require("workerbox")`: the host API (lib/api.js: createWorker(),
// dispatch(), the bindings, the pool) and four functions of the project tooling (lib/project/,
// also `workerbox/project`): loadProject(), startDevServer(), getPlatformProxy(), readConfig().
// The tooling is built on lib/api.js and never imports this file, so this re-export is no import
// circle. It is loaded on first use, so `require("workerbox")` does not load esbuild, the TOML
// parser or the rest unless a project function is called.

const api = require("./lib/api.js");

const project = () => require("./lib/project/index.js");

module.exports.createWorker = api.createWorker;
module.exports.configurePool = api.configurePool;
module.exports.poolStats = api.poolStats;
module.exports.clearPool = api.clearPool;
module.exports.codeCacheStats = api.codeCacheStats;
module.exports.dispatch = api.dispatch;
module.exports.Worker = api.Worker;
module.exports.kv = api.kv;
module.exports.storage = api.storage;
module.exports.service = api.service;
module.exports.durableObject = api.durableObject;
module.exports.d1 = api.d1;
module.exports.checkpointStorage = api.checkpointStorage;
module.exports.readD1Migrations = api.readD1Migrations;
module.exports.applyD1Migrations = api.applyD1Migrations;
module.exports.loadProject = (...args) => project().loadProject(...args);
module.exports.startDevServer = (...args) => project().startDevServer(...args);
module.exports.getPlatformProxy = (...args) => project().getPlatformProxy(...args);
module.exports.readConfig = (...args) => project().readConfig(...args);
module.exports.queue = api.queue;
module.exports.hyperdrive = api.hyperdrive;
module.exports.workflow = api.workflow;
module.exports.rateLimit = api.rateLimit;
module.exports.analyticsEngine = api.analyticsEngine;
module.exports.sendEmail = api.sendEmail;
module.exports.secretsStoreSecret = api.secretsStoreSecret;
module.exports.versionMetadata = api.versionMetadata;
module.exports.memoryCache = api.memoryCache;
module.exports.unsafeEval = api.unsafeEval;
module.exports.workerLoader = api.workerLoader;
