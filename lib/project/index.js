"use strict";
// workerbox/project: the project tooling in one place — loadProject() (wrangler config + bundle
// + bindings), readConfig(), bundle(), startDevServer() (`workerbox dev`), getPlatformProxy() and
// createAssetHandler(). Each lives in its own file beside this one.

const { readConfig, ConfigError, SUPPORTED, UNSUPPORTED, DEPLOY_ONLY } = require("./config.js");
const { bundle, BuildError } = require("./bundle.js");
const { loadProject, startWorker } = require("./load.js");
const { createAssetHandler } = require("./assets.js");
const { startDevServer } = require("./dev.js");
const { startDevServers, loadProjects } = require("./multi.js");
const { getPlatformProxy } = require("./platform.js");

module.exports = {
  loadProject,
  startWorker,
  readConfig,
  bundle,
  startDevServer,
  startDevServers,
  loadProjects,
  getPlatformProxy,
  createAssetHandler,
  ConfigError,
  BuildError,
  configKeys: { supported: SUPPORTED, unsupported: UNSUPPORTED, deployOnly: DEPLOY_ONLY },
};
