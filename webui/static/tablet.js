// The tablet page. The table service owns the truth: this script shows the last State it was sent
// (over /api/events), and every tap becomes one POST carrying the version it saw.
"use strict";

const CONFIG = JSON.parse(document.getElementById("page-config").textContent);
const CATEGORIES = CONFIG.categories;
const MAX_PLAYERS = CONFIG.max_players;
const MAX_NAME_LENGTH = CONFIG.max_name_length;
// A state check this often catches a stream that died silently (a tablet's Wi-Fi sleeping).
const WATCHDOG_MS = 10000;
const FETCH_TIMEOUT_MS = 5000;
// Turns that cost less than this against the advisor are rounding noise, not mistakes.
const COSTLY_THRESHOLD = 0.05;
const COSTLY_SHOWN = 3;
// A camera die below this confidence is outlined so players check it.
const DOUBTFUL_CONFIDENCE = 0.75;
// Between throws a tap holds a die; holding it down this long corrects it instead.
const LONG_PRESS_MS = 550;

const $ = (id) => document.getElementById(id);

const page = {
  state: null,
  language: pickLanguage(),
  startOpen: false,
  startPlayers: null,
  pastGames: [],
  playerStats: [], // each player's record over finished games (GET /api/stats)
  pastGamesFor: null, // the ended game the list of games was last fetched for
  historyGame: null,
  writing: Promise.resolve(), // the last write sent, which the next one waits for
  wakeLock: null, // the screen wake lock held during a game
  wakeWanted: false,
  wakeChanging: false,
  connected: null, // null until the first answer: not yet known to be unreachable
  wasLost: false,
  events: null,
  reconnectDelay: 1000,
  pendingRecord: null,
  dialogBasis: null, // what the open dialog's player acted on (see actedOn)
  pendingDie: null,
  wantedHolds: null, // holds tapped but not yet confirmed by the table, shown at once
  dismissedQuestion: null, // the camera's question this tablet chose not to answer now
  manualDice: [null, null, null, null, null],
  manualPositions: [0, 1, 2, 3, 4], // the places of the roll the values entered go to (not those held)
  manualSavesItself: true, // the keypad saves at the fifth value unless it started from a camera's throw
  celebrated: null,
  toastTimer: null,
  stillReading: null, // the reading (as JSON) whose picture the camera dialog shows
  thumbReading: null, // and the one the game screen's small picture shows
};

// --- words ---------------------------------------------------------------------------------------

function pickLanguage() {
  const saved = localStorage.getItem("yacht.language");
  if (CONFIG.languages.includes(saved)) return saved;
  for (const wanted of navigator.languages || []) {
    const base = wanted.toLowerCase().split("-")[0];
    if (CONFIG.languages.includes(base)) return base;
  }
  return "en";
}

// Catalogue texts are ICU-style messages: "{name}" is a value, and "{points, plural, one {# point}
// other {# points}}" picks the form the language's plural rules ask for (# is the number).
function t(key, params = {}) {
  const text = CONFIG.catalogs[page.language][key] ?? CONFIG.catalogs.en[key] ?? key;
  return formatMessage(text, params);
}

function formatMessage(text, params) {
  let out = "";
  let at = 0;
  for (let open = text.indexOf("{"); open >= 0; open = text.indexOf("{", at)) {
    const close = closingBrace(text, open);
    out += text.slice(at, open) + formatArgument(text.slice(open + 1, close), params);
    at = close + 1;
  }
  return out + text.slice(at);
}

function closingBrace(text, open) {
  let depth = 0;
  for (let at = open; at < text.length; at++) {
    if (text[at] === "{") depth++;
    else if (text[at] === "}" && --depth === 0) return at;
  }
  return text.length - 1;
}

function formatArgument(inner, params) {
  const plural = inner.match(/^(\w+),\s*plural,([\s\S]*)$/);
  if (!plural) return inner in params ? formatValue(params[inner]) : "{" + inner + "}";
  const [, name, body] = plural;
  const forms = {};
  for (let at = 0; at < body.length;) {
    const selector = body.slice(at).match(/^\s*(=\d+|\w+)\s*\{/);
    if (!selector) break;
    const open = at + selector[0].length - 1;
    const close = closingBrace(body, open);
    forms[selector[1]] = body.slice(open + 1, close);
    at = close + 1;
  }
  const value = params[name];
  const number = typeof value === "object" ? value.value : Number(value);
  const digits = typeof value === "object" ? value.digits : 0;
  const rules = new Intl.PluralRules(locale(), { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const form = forms["=" + number] ?? forms[rules.select(number)] ?? forms.other ?? "";
  return formatMessage(form.replaceAll("#", formatValue(value)), params);
}

// A number shown with one decimal (points against the advisor): plural rules see the decimals too.
function oneDecimal(value) {
  return { value, digits: 1 };
}

function formatValue(value) {
  if (value !== null && typeof value === "object") {
    return new Intl.NumberFormat(locale(), { minimumFractionDigits: value.digits, maximumFractionDigits: value.digits }).format(value.value);
  }
  return String(value);
}

const LOCALES = { sr: "sr-Cyrl", pt: "pt-BR" };

function locale() {
  return LOCALES[page.language] ?? page.language;
}

function categoryName(category) {
  return t("cat." + category);
}

function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(date);
}

function joinNames(names) {
  if (names.length < 2) return names.join("");
  return names.slice(0, -1).join(", ") + " " + t("and") + " " + names[names.length - 1];
}

function setLanguage(language) {
  page.language = language;
  localStorage.setItem("yacht.language", language);
  render();
}

// The page's buttons for choosing a language: on the start screen and in the menu during a game.
function renderLanguages(container) {
  fill(container, page.language, () =>
    CONFIG.languages.map((language) =>
      el("button", {
        type: "button",
        class: "button",
        lang: LOCALES[language] ?? language,
        "aria-pressed": String(language === page.language),
        "data-language": language,
        text: CONFIG.catalogs[language].language_name,
        onclick: () => setLanguage(language),
      })));
}

// --- light or dark -------------------------------------------------------------------------------

const THEMES = ["auto", "light", "dark"];
const DEVICE_DARK = window.matchMedia("(prefers-color-scheme: dark)");

function chosenTheme() {
  const saved = localStorage.getItem("yacht.theme");
  return THEMES.includes(saved) ? saved : "auto";
}

// The style sheet knows only data-theme; "auto" follows the device, also when it changes its mind.
function applyTheme() {
  const theme = chosenTheme();
  const dark = theme === "dark" || (theme === "auto" && DEVICE_DARK.matches);
  setAttr(document.documentElement, "data-theme", dark ? "dark" : "light");
}

function setTheme(theme) {
  localStorage.setItem("yacht.theme", theme);
  applyTheme();
  render();
}

function translateStatic() {
  setAttr(document.documentElement, "lang", locale());
  if (document.title !== t("app_title")) document.title = t("app_title");
  for (const node of document.querySelectorAll("[data-i18n]")) setText(node, t(node.dataset.i18n));
}

// --- DOM helpers ---------------------------------------------------------------------------------

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of [].concat(children)) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// A state arrives about once a second while the camera reports. Redrawing touches only what changed:
// a button replaced while a finger (or mouse button) is down on it never receives the tap.
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function setAttr(node, name, value) {
  if (value === null || value === undefined) node.removeAttribute(name);
  else if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

function setClass(node, className) {
  if (node.getAttribute("class") !== className) node.setAttribute("class", className);
}

// Rebuilds `node`'s children from `build()` only when `key` (what they are drawn from) changed.
function fill(node, key, build) {
  if (node.drawnFrom === key) return;
  node.drawnFrom = key;
  node.replaceChildren(...[].concat(build()).filter((child) => child !== null && child !== undefined));
}

const PIP_LAYOUTS = {
  1: [[50, 50]],
  2: [[73, 27], [27, 73]],
  3: [[73, 27], [50, 50], [27, 73]],
  4: [[27, 27], [73, 27], [27, 73], [73, 73]],
  5: [[27, 27], [73, 27], [50, 50], [27, 73], [73, 73]],
  6: [[27, 25], [27, 50], [27, 75], [73, 25], [73, 50], [73, 75]],
};

function dieFace(value) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("class", "face");
  svg.setAttribute("aria-hidden", "true");
  const body = document.createElementNS(ns, "rect");
  for (const [name, v] of [["x", 4], ["y", 4], ["width", 92], ["height", 92], ["rx", 18], ["class", "face-body"]]) {
    body.setAttribute(name, v);
  }
  svg.append(body);
  for (const [cx, cy] of PIP_LAYOUTS[value] || []) {
    const pip = document.createElementNS(ns, "circle");
    pip.setAttribute("cx", cx);
    pip.setAttribute("cy", cy);
    pip.setAttribute("r", 9.5);
    pip.setAttribute("class", "pip");
    svg.append(pip);
  }
  if (!PIP_LAYOUTS[value]) {
    const mark = document.createElementNS(ns, "text");
    mark.setAttribute("x", 50);
    mark.setAttribute("y", 64);
    mark.setAttribute("text-anchor", "middle");
    mark.setAttribute("class", "face-unknown");
    mark.textContent = "?";
    svg.append(mark);
  }
  return svg;
}

function showToast(message) {
  const toast = $("toast");
  toast.textContent = message;
  toast.hidden = false;
  clearTimeout(page.toastTimer);
  page.toastTimer = setTimeout(() => (toast.hidden = true), 4000);
}

// --- talking to the table ------------------------------------------------------------------------

async function fetchJson(url, options = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
  try {
    const response = await fetch(url, { ...options, signal: controller.signal, cache: "no-store" });
    const body = await response.json().catch(() => null);
    return { response, body };
  } finally {
    clearTimeout(timer);
  }
}

// `authoritative`: the first state of a new event stream, taken even if its version is lower
// (a table whose data was reset counts versions from the start again).
function applyState(state, authoritative = false) {
  if (!state || typeof state.version !== "number") return;
  // The reply to a write and its event carry the same version: draw it once.
  if (page.state && !authoritative && state.version <= page.state.version) return;
  const previous = page.state;
  page.state = state;
  celebrateYacht(previous, state);
  render();
}

async function refreshState() {
  const { response, body } = await fetchJson("/api/state");
  if (!response.ok) throw new Error("state " + response.status);
  applyState(body);
}

function pin() {
  return sessionStorage.getItem("yacht.pin");
}

function askPin(wrong) {
  const dialog = $("dialog-pin");
  $("pin-text").textContent = wrong ? t("pin_wrong") : t("pin_text");
  $("pin-input").value = "";
  return new Promise((resolve) => {
    const finish = () => {
      dialog.removeEventListener("close", finish);
      const value = dialog.returnValue === "ok" ? $("pin-input").value.trim() : "";
      if (value) sessionStorage.setItem("yacht.pin", value);
      resolve(value);
    };
    dialog.addEventListener("close", finish);
    dialog.returnValue = "";
    dialog.showModal();
  });
}

// What the player has in front of them now: the state version and the game as shown. A dialog keeps
// the one of the moment it opened, so its answer is about what it showed; a direct tap sends the
// current one. The table refuses the write if the game moved on since (camera status alone does not).
function actedOn() {
  const game = currentGame();
  const seen = game
    ? { game: game.id, turn: game.turn, player: game.current_player, roll: game.roll_number, dice: game.dice }
    : null;
  return { version: page.state ? page.state.version : 0, seen };
}

// One write: what the player acted on goes with it; a refusal because the game moved on says how and
// shows the latest state, a PIN refusal asks once.
// Writes go out one after the other: a tap made while the last write's answer is still on its way
// (its event may have redrawn the screen first) waits for it instead of being dropped.
function send(path, payload, basis = actedOn()) {
  const result = page.writing.then(() => sendNow(path, payload, basis));
  page.writing = result.catch(() => false);
  return result;
}

async function sendNow(path, payload, basis) {
  if (page.connected === false) {
    showToast(t("err.network"));
    return false;
  }
  document.body.classList.add("busy");
  try {
    for (;;) {
      const headers = { "Content-Type": "application/json" };
      if (pin()) headers["X-Table-Pin"] = pin();
      const body = { ...payload, version: basis.version };
      if (basis.seen) body.seen = basis.seen;
      let reply;
      try {
        reply = await fetchJson(path, { method: "POST", headers, body: JSON.stringify(body) });
      } catch (error) {
        showToast(t("err.network"));
        return false;
      }
      const { response, body: answer } = reply;
      if (response.ok) {
        applyState(answer);
        return true;
      }
      const error = (answer && answer.error) || {};
      if (response.status === 403 && (error.code === "pin_required" || error.code === "pin_wrong")) {
        if (error.code === "pin_wrong") sessionStorage.removeItem("yacht.pin");
        if (await askPin(error.code === "pin_wrong")) continue;
        return false;
      }
      if (error.code === "stale_version") {
        await refreshState().catch(() => showToast(t("err.network")));
        // A new game is refused only when the unfinished one moved on meanwhile: its dice mean nothing here.
        showToast(path === "/api/games" ? t("stale_start") : staleText(error.changed || []));
        return false;
      }
      const wait = error.code === "pin_locked" ? pinWait(response.headers.get("Retry-After")) : null;
      if (wait) {
        showToast(t("err.pin_locked", { wait }));
        return false;
      }
      const known = "err." + error.code;
      const text = known in CONFIG.catalogs.en ? t(known) : t("error", { message: error.message || response.status });
      showToast(text);
      return false;
    }
  } finally {
    document.body.classList.remove("busy");
  }
}

// The wait the table asks for after too many wrong PINs (30 s, doubling up to 15 min), in words.
function pinWait(retryAfter) {
  const seconds = Number(retryAfter);
  if (!retryAfter || !Number.isFinite(seconds) || seconds <= 0) return null;
  return seconds < 90 ? t("wait.seconds", { n: Math.ceil(seconds) }) : t("wait.minutes", { n: Math.ceil(seconds / 60) });
}

// How the game moved on between what the player saw and the table's answer, in a sentence.
function staleText(changed) {
  const now = Object.fromEntries(changed.map((change) => [change.what, change]));
  const game = currentGame();
  const parts = [];
  if (now.game) parts.push(t("changed.game"));
  else if (now.player || now.turn) {
    if (game && game.current_player_name) parts.push(t("changed.player", { name: game.current_player_name }));
    else parts.push(t("err.game_over"));
  } else {
    if (now.roll) parts.push(now.roll.now === 0 ? t("changed.roll_undone") : t("changed.roll", { n: now.roll.now }));
    if (now.dice && now.dice.now) parts.push(t("changed.dice", { dice: now.dice.now.join(" ") }));
  }
  return parts.length ? t("stale_changed", { changes: parts.join("; ") }) : t("stale");
}

function setConnected(connected) {
  if (connected === page.connected) return;
  page.connected = connected;
  const badge = $("connection");
  if (!connected) {
    page.wasLost = true;
    badge.className = "connection lost";
    badge.textContent = t("conn_lost");
    badge.hidden = false;
    render();
    return;
  }
  render();
  if (!page.wasLost) return;
  page.wasLost = false;
  badge.className = "connection ok";
  badge.textContent = t("conn_back");
  badge.hidden = false;
  setTimeout(() => page.connected && (badge.hidden = true), 2500);
}

function connectEvents() {
  if (page.events) page.events.close();
  const events = new EventSource("/api/events");
  page.events = events;
  let firstOfStream = true;
  events.addEventListener("open", () => {
    firstOfStream = true;
    setConnected(true);
  });
  events.addEventListener("state", (message) => {
    page.reconnectDelay = 1000;
    setConnected(true);
    try {
      applyState(JSON.parse(message.data), firstOfStream);
      firstOfStream = false;
    } catch (error) {
      console.error("bad state event", error);
    }
  });
  events.addEventListener("error", () => {
    setConnected(false);
    // The browser retries by itself unless the server refused outright; then retry here.
    if (events.readyState === EventSource.CLOSED) {
      setTimeout(() => page.events === events && connectEvents(), page.reconnectDelay);
      page.reconnectDelay = Math.min(page.reconnectDelay * 2, 15000);
    }
  });
}

async function watchdog() {
  try {
    await refreshState();
    if (!page.connected || !page.events || page.events.readyState === EventSource.CLOSED) connectEvents();
  } catch (error) {
    setConnected(false);
  }
}

// --- rendering -----------------------------------------------------------------------------------

function currentGame() {
  return page.state ? page.state.game : null;
}

function screenToShow() {
  if (location.pathname === "/history") return "history";
  if (!page.state) return "loading";
  const game = currentGame();
  if (page.startOpen || !game) return "start";
  return game.is_over ? "over" : "game";
}

function render() {
  translateStatic();
  // What needs the table (every write) looks and acts disabled while it cannot be reached.
  document.body.classList.toggle("unreachable", page.connected === false);
  const screen = screenToShow();
  for (const name of ["loading", "start", "game", "over", "history"]) $("screen-" + name).hidden = name !== screen;
  document.body.dataset.screen = screen;
  keepAwake(screen === "game");
  renderTopbar(screen);
  if ($("dialog-camera").open) {
    renderCameraDialog();
    followTheThrow();
  }
  if ($("dialog-menu").open) renderMenu();
  if (screen !== "game") {
    for (const id of ["dialog-confirm", "dialog-die", "dialog-manual", "dialog-kept"]) if ($(id).open) $(id).close();
  }
  if (screen === "start") renderStart();
  if (screen === "game") renderGame();
  if (screen === "over") {
    // The game's dates are in the list of games: fetched again once a game has ended.
    if (page.pastGamesFor !== currentGame().id) {
      page.pastGamesFor = currentGame().id;
      loadPastGames();
    }
    renderOver();
  }
  if (screen === "history") renderHistory();
}

function renderTopbar(screen) {
  const game = currentGame();
  const undo = $("undo-button");
  undo.hidden = !(game && (screen === "game" || screen === "over"));
  undo.disabled = !(game && game.can_undo);
  const what = game ? undoWhat(game) : null;
  setText($("undo-what"), what || "");
  setAttr(undo, "aria-label", what ? t("undo_label", { what }) : t("undo"));
  $("new-game-button").hidden = $("menu-new-game").hidden = screen === "start";
  $("history-button").hidden = $("menu-history").hidden = screen === "history";
  // Out of touch with the table, its last camera status may no longer be true: say it is not known.
  const camera = page.state && page.connected !== false ? page.state.camera : null;
  const status = camera ? camera.status : page.state ? "unknown" : "off";
  const pill = $("camera-pill");
  setAttr(pill, "data-status", status);
  // A demo camera says so wherever its status shows: its throws are sample pictures.
  const pillKey = camera && camera.demo && status === "live" ? "cam.demo" : "cam." + status;
  setText($("camera-pill-text"), t(pillKey));
  setAttr(pill, "aria-label", t("camera_view") + ": " + t(pillKey));
  const badge = $("connection");
  if (!badge.hidden) setText(badge, page.connected ? t("conn_back") : t("conn_lost"));
}

// What Undo takes back, as the players saw it happen: the last roll, hold, correction or row taken.
function undoWhat(game) {
  if (!game.can_undo) return null;
  if (game.last_action === "hold") return t("undo_hold", { name: game.current_player_name });
  if (game.dice && game.roll_number > 0) {
    const name = game.current_player_name;
    if (game.dice_source === "corrected") return t("undo_correct", { name });
    return t("undo_roll", { name, n: game.roll_number });
  }
  const last = game.history[game.history.length - 1];
  return last ? t("undo_record", { name: last.player_name, category: categoryName(last.category) }) : null;
}

function openMenu() {
  renderMenu();
  $("dialog-menu").showModal();
}

function renderMenu() {
  renderLanguages($("menu-languages"));
  const theme = chosenTheme();
  fill($("menu-themes"), JSON.stringify([theme, page.language]), () =>
    THEMES.map((choice) => el("button", {
      type: "button", class: "button", "data-theme": choice, "aria-pressed": String(choice === theme),
      text: t("theme." + choice), onclick: () => setTheme(choice),
    })));
}

// Start screen -------------------------------------------------------------------------------------

function openStart() {
  const game = currentGame();
  page.startPlayers = game ? [...game.players] : ["", ""];
  page.startOpen = true;
  $("player-list").dataset.language = "";
  $("start-error").hidden = true;
  loadPastGames();
  navigate("/");
}

function renderStart() {
  if (!page.startPlayers) {
    const game = currentGame();
    page.startPlayers = game ? [...game.players] : ["", ""];
    loadPastGames();
  }
  const list = $("player-list");
  // Rebuilding the inputs on every state event would drop what is being typed, so only on change.
  if (list.dataset.language !== page.language || list.children.length !== page.startPlayers.length) renderPlayerList();
  const game = currentGame();
  $("back-to-game").hidden = !game;

  renderLanguages($("language-list"));

  const currentId = game ? game.id : null;
  const unfinished = page.pastGames.filter((past) => !past.is_over && past.id !== currentId);
  $("unfinished").hidden = unfinished.length === 0;
  fill($("unfinished-list"), JSON.stringify([unfinished, page.language]), () => unfinished.map((past) => gameListItem(past, true)));
}

function renderPlayerList() {
  const list = $("player-list");
  list.dataset.language = page.language;
  list.replaceChildren(
    ...page.startPlayers.map((name, index) =>
      el("li", { class: "player-row" }, [
        el("span", { class: "player-number", text: String(index + 1) }),
        el("input", {
          class: "text-input",
          type: "text",
          value: name,
          maxlength: String(MAX_NAME_LENGTH),
          placeholder: t("player_default", { n: index + 1 }),
          "aria-label": t("player_name", { n: index + 1 }),
          "data-player": String(index),
          enterkeyhint: "done",
          oninput: (event) => (page.startPlayers[index] = event.target.value),
        }),
        el("button", {
          type: "button", class: "button icon", text: "↑", "aria-label": t("move_up"), disabled: index === 0,
          onclick: () => movePlayer(index, -1),
        }),
        el("button", {
          type: "button", class: "button icon", text: "↓", "aria-label": t("move_down"),
          disabled: index === page.startPlayers.length - 1, onclick: () => movePlayer(index, 1),
        }),
        el("button", {
          type: "button", class: "button icon", text: "✕", "aria-label": t("remove_player"),
          disabled: page.startPlayers.length === 1, onclick: () => removePlayer(index),
        }),
      ]),
    ),
  );
  $("add-player").disabled = page.startPlayers.length >= MAX_PLAYERS;
}

function movePlayer(index, step) {
  const players = page.startPlayers;
  [players[index], players[index + step]] = [players[index + step], players[index]];
  renderPlayerList();
}

function removePlayer(index) {
  page.startPlayers.splice(index, 1);
  renderPlayerList();
}

async function startGame(players) {
  const names = players.map((name, index) => name.trim().replace(/\s+/g, " ") || t("player_default", { n: index + 1 }));
  const folded = names.map((name) => name.toLocaleLowerCase());
  if (new Set(folded).size !== folded.length) {
    $("start-error").textContent = t("names_twice");
    $("start-error").hidden = false;
    return;
  }
  $("start-error").hidden = true;
  if (await send("/api/games", { players: names })) {
    page.startOpen = false;
    page.startPlayers = null;
    navigate("/");
  }
}

async function loadPastGames() {
  try {
    const { response, body } = await fetchJson("/api/games");
    if (response.ok && body && Array.isArray(body.games)) {
      page.pastGames = body.games;
      const screen = screenToShow();
      if (screen === "start") renderStart();
      if (screen === "history") renderHistory();
      if (screen === "over") renderOver();
    }
  } catch (error) {
    showToast(t("err.network"));
  }
}

function gameListItem(past, withResume) {
  const standings = past.players.map((name, index) => `${name} ${past.totals[index]}`).join(" · ");
  const when = past.is_over ? t("finished", { date: formatDate(past.finished) }) : t("unfinished") + " · " + t("started", { date: formatDate(past.started) });
  const actions = [
    el("button", { type: "button", class: "button", text: t("view"), onclick: () => viewPastGame(past.id) }),
  ];
  if (withResume && !past.is_over) {
    actions.push(el("button", {
      type: "button", class: "button primary", text: t("resume"), "data-resume": String(past.id),
      onclick: () => resumeGame(past.id),
    }));
  }
  return el("li", { class: "game-item" + (past.is_over ? "" : " open") }, [
    el("div", {}, [el("strong", { text: standings }), el("div", { class: "muted small", text: when })]),
    el("div", { class: "game-item-actions" }, actions),
  ]);
}

async function resumeGame(id) {
  if (await send("/api/games/resume", { game_id: id })) {
    page.startOpen = false;
    navigate("/");
  }
}

// Game screen --------------------------------------------------------------------------------------

function renderStandings(game) {
  const list = $("standings");
  fill(list, JSON.stringify([game.players, game.totals, game.current_player]), () =>
    game.players.map((name, index) =>
      el("li", { class: "standing" + (index === game.current_player ? " current" : "") }, [
        el("span", { text: name }),
        el("span", { class: "standing-total", text: String(game.totals[index]) }),
      ]),
    ),
  );
  // On a narrow screen the players are one scrolling line: keep the current one in it.
  const current = list.querySelector(".current");
  if (current && list.scrollWidth > list.clientWidth) {
    const left = current.offsetLeft - list.offsetLeft;
    if (left < list.scrollLeft || left + current.offsetWidth > list.scrollLeft + list.clientWidth) {
      list.scrollLeft = left - (list.clientWidth - current.offsetWidth) / 2;
    }
  }
}

function renderGame() {
  const game = currentGame();
  const camera = page.state.camera;
  renderStandings(game);
  renderCameraThumb(game, camera);
  $("camera-button").hidden = camera.status === "off";
  // The demo camera throws its sample pictures when asked: a button for it, and never by itself.
  $("throw-button").hidden = !camera.demo;
  setText($("turn-title"), t("turn_of", { name: game.current_player_name }));
  setText($("turn-number"), t("turn_n", { turn: game.turn, total: game.turns_per_player }));
  const maxRolls = game.roll_number + game.rolls_left;
  let rollText = game.roll_number === 0 ? t("roll_none") : t("roll_n", { n: game.roll_number, max: maxRolls });
  if (game.roll_number > 0 && game.rolls_left === 0) rollText += " · " + t("rolls_used");
  setText($("roll-line"), rollText);

  const advice = game.advice;
  const canHold = Boolean(game.dice) && game.rolls_left > 0;
  const keeping = advice && advice.best_keep && canHold && advice.best_keep.length < 5;
  const kept = new Set(keeping ? advice.best_keep_positions : []);
  const held = new Set(canHold ? shownHolds(game) : []);
  // With all five held there is nothing to throw: the button says so by being off, the hint says why.
  const allHeld = held.size === 5;
  $("throw-button").disabled = game.rolls_left === 0 || allHeld || camera.status === "reading" || camera.status === "offline";
  const confidence = game.dice_source === "camera" ? game.dice_confidence : null;
  const row = $("dice");
  if (row.children.length !== 5) row.replaceChildren(...[0, 1, 2, 3, 4].map(dieButton));
  for (const [index, button] of [...row.children].entries()) {
    const value = game.dice ? game.dice[index] : null;
    // a die held out of the camera's view has no confidence: it was settled at an earlier throw
    const doubtful = confidence && typeof confidence[index] === "number" && confidence[index] < DOUBTFUL_CONFIDENCE;
    const badge = held.has(index) ? "held" : kept.has(index) ? "keep" : null;
    const classes = ["die"];
    if (badge) classes.push(badge);
    if (doubtful) classes.push("doubtful");
    if (value === null) classes.push("empty");
    setClass(button, classes.join(" "));
    setAttr(button, "aria-pressed", canHold ? String(held.has(index)) : null);
    setAttr(button, "aria-label", t("die_label", { n: index + 1, value: value === null ? "?" : value }) + (badge ? " · " + t(badge) : ""));
    fill(button, JSON.stringify([value, badge, page.language]), () =>
      [dieFace(value), badge ? el("span", { class: badge + "-badge", text: t(badge) }) : null]);
  }
  const source = game.dice ? t("dice_source." + (game.dice_source || "manual")) + " · " + t(allHeld ? "err.all_held" : canHold ? "hold_hint" : "tap_die_hint") : "";
  setText($("dice-source"), source);
  renderKeepThese(game, advice, canHold);
  $("manual-roll").disabled = game.rolls_left === 0;

  renderCameraMessage(game, camera);
  renderAdvice(game);
  renderSheet(game);
  closeOutdatedDialogs(game);
}

// A die of the row: a tap holds it between throws (or corrects it once no throw is left); held
// down, it is corrected.
function dieButton(index) {
  const button = el("button", { type: "button", class: "die", "data-die": String(index) });
  button.addEventListener("pointerdown", () => {
    clearTimeout(button.pressTimer);
    button.longPress = false;
    button.pressTimer = setTimeout(() => {
      button.longPress = true;
      const game = currentGame();
      if (game && game.dice && !$("dialog-die").open) openDiePicker(index);
    }, LONG_PRESS_MS);
  });
  for (const end of ["pointerup", "pointerleave", "pointercancel"]) {
    button.addEventListener(end, () => clearTimeout(button.pressTimer));
  }
  button.addEventListener("contextmenu", (event) => event.preventDefault()); // a long press is ours
  button.addEventListener("click", () => {
    if (button.longPress) button.longPress = false;
    else tapDie(index);
  });
  return button;
}

function tapDie(index) {
  const game = currentGame();
  if (!game) return;
  if (!game.dice) openManual();
  else if (game.rolls_left > 0) toggleHold(index);
  else openDiePicker(index);
}

// The holds this tablet shows: the table's, or those just tapped while the table is told.
function shownHolds(game) {
  return page.wantedHolds ?? game.held ?? [];
}

// Taps in quick succession each change the holds shown at once; the table gets the latest wish
// after each answer, so no tap is lost to a request still on its way.
async function toggleHold(index) {
  const wanted = new Set(shownHolds(currentGame()));
  if (wanted.has(index)) wanted.delete(index);
  else wanted.add(index);
  await askToHold([...wanted].sort((a, b) => a - b));
}

async function askToHold(positions) {
  page.wantedHolds = positions;
  render();
  if (page.holding) return;
  page.holding = true;
  try {
    for (;;) {
      const game = currentGame();
      const wish = page.wantedHolds;
      if (!game || !game.dice || JSON.stringify(wish) === JSON.stringify(game.held)) break;
      if (!(await send("/api/hold", { positions: wish }))) break;
    }
  } finally {
    page.holding = false;
    page.wantedHolds = null;
    render();
  }
}

// The advisor's keep in one tap, while it is not what is held already.
function renderKeepThese(game, advice, canHold) {
  const button = $("keep-these");
  const keep = advice && advice.best_keep;
  const heldValues = shownHolds(game).map((index) => game.dice[index]).sort().join();
  button.hidden = !(canHold && keep && keep.length > 0 && keep.length < 5 && [...keep].sort().join() !== heldValues);
}

// Another tablet or the camera may move the game on while a dialog is open here.
function closeOutdatedDialogs(game) {
  if ($("dialog-confirm").open && !(game.dice && page.pendingRecord in game.open_scores)) $("dialog-confirm").close();
  if ($("dialog-die").open && !game.dice) $("dialog-die").close();
  if ($("dialog-manual").open && game.rolls_left === 0) $("dialog-manual").close();
  renderKeptQuestion(page.state.camera.question);
}

// The camera saw a throw it cannot make a roll of alone: every tablet asks, one tap answers.
function renderKeptQuestion(question) {
  const dialog = $("dialog-kept");
  // The throw the question is about: dismissed, it stays dismissed while holds re-rank its choices.
  const key = question ? JSON.stringify([page.state.camera.reading, question.reason]) : null;
  if (!question || key === page.dismissedQuestion) {
    if (dialog.open) dialog.close();
    return;
  }
  const bumped = question.reason === "bumped";
  setText($("kept-title"), t(bumped ? "bumped_title" : "kept_title"));
  // a bumped die shows in its choices; which dice were kept is what the outlines say
  setText($("kept-text"), bumped ? "" : cameraText(page.state.camera) + " " + t("kept_legend"));
  fill($("kept-choices"), JSON.stringify([question, page.language]), () =>
    question.choices.map((choice, index) => {
      const label = bumped ? t(index === 0 ? "bumped_put_back" : "bumped_as_lies") : choice.advised ? t("kept_advised") : null;
      const faces = choice.dice.map((value, position) =>
        el("span", { class: "kept-die" + (choice.held.includes(position) ? " held" : "") }, [dieFace(value)]));
      const spoken = choice.dice.map((value, position) => (choice.held.includes(position) ? `${value} (${t("held")})` : String(value)));
      return el("button", {
        type: "button", class: "button kept-choice" + (choice.advised ? " advised" : ""), "data-choice": String(index),
        "aria-label": (label ? label + ": " : "") + spoken.join(", "),
        onclick: () => chooseThrow(index),
      }, [label ? el("span", { class: "kept-label", text: label }) : null, el("span", { class: "kept-dice" }, faces)]);
    }));
  dialog.dataset.question = key;
  if (!dialog.open) dialog.showModal();
}

async function chooseThrow(index) {
  $("dialog-kept").close();
  await send("/api/choose", { choice: index });
}

function renderCameraMessage(game, camera) {
  const box = $("camera-message");
  let text = null;
  let tone = "info";
  if (page.connected === false) {
    text = null; // the top bar says the table is out of reach; what it last said of its camera may be old
  } else if (camera.status !== "offline" && typedSinceReading(game, camera)) {
    text = null;
  } else if (camera.status === "offline") {
    text = [cameraText(camera), t("cam_offline_help")].filter(Boolean).join(" · ");
    tone = "bad";
  } else if (game.rolls_left === 0 && (camera.status === "unsure" || (camera.reading && camera.reading_counted === false))) {
    text = t("cam_not_counted"); // whatever the camera made of it: re-throwing or entering cannot help now
    tone = "warn";
  } else if (camera.status === "unsure") {
    text = [cameraText(camera), t("cam_unsure_help")].filter(Boolean).join(" · ");
    tone = "warn";
  } else if (camera.status === "off" && !game.dice) {
    text = t("cam_off_help");
  } else if (camera.demo && game.roll_number === 0) {
    text = t("demo_help");
  }
  box.hidden = text === null;
  setText(box, text || "");
  setAttr(box, "data-tone", tone);
}

function renderAdvice(game) {
  const advice = game.advice;
  const body = $("advice-body");
  // Dice but no advice: the advisor is not available (still loading, or failed); say nothing.
  $("advice").hidden = Boolean(game.dice) && !advice;
  setText($("advice-note"), advice ? t("advice_note", { name: game.current_player_name }) : "");
  const drawnFrom = [advice, game.dice, game.rolls_left, game.totals[game.current_player], page.language];
  fill(body, JSON.stringify(drawnFrom), () => adviceParts(game, advice));
}

function adviceParts(game, advice) {
  if (!advice || !game.dice) return el("p", { class: "muted", text: t("advice_waiting") });
  const parts = [];
  const best = t("advice_best_row", { category: categoryName(advice.best_category), points: advice.category_points });
  if (advice.best_keep && game.rolls_left > 0) {
    if (advice.best_keep.length === 5) {
      parts.push(el("p", { class: "advice-main", text: t("advice_stop") }));
      parts.push(el("p", { class: "advice-main", text: best }));
    } else if (advice.best_keep.length === 0) {
      parts.push(el("p", { class: "advice-main", text: t("advice_reroll_all") }));
    } else {
      parts.push(el("p", { class: "advice-main", text: t("advice_keep") }));
      parts.push(el("div", { class: "mini-dice" }, advice.best_keep.map((value) => dieFace(value))));
    }
    if (typeof advice.keep_ev === "number") parts.push(expectedTotal(game, advice.keep_ev));
    if (advice.best_keep.length !== 5) parts.push(el("p", { class: "muted", text: best }));
  } else {
    parts.push(el("p", { class: "advice-main", text: best }));
    if (typeof advice.category_ev === "number") parts.push(expectedTotal(game, advice.category_ev));
  }
  return parts;
}

// The advisor's ev covers the rest of the game only; players think in final totals.
function expectedTotal(game, ev) {
  const banked = game.totals[game.current_player];
  return el("p", { text: t("advice_ev", { ev: oneDecimal(banked + ev) }) });
}

// The sheet's rows and columns are built once per game and language; a state changes cells in place.
function renderSheet(game) {
  const table = $("sheet");
  const shape = JSON.stringify([game.id, game.players, page.language]);
  if (table.drawnFrom !== shape) {
    table.drawnFrom = shape;
    const cells = () => game.players.map(() => el("td"));
    table.replaceChildren(
      el("thead", {}, el("tr", {}, [el("th", { scope: "col", class: "row-name" }),
        ...game.players.map((name) => el("th", { scope: "col", title: name }, el("span", { class: "player-name", text: name })))])),
      el("tbody", {}, CATEGORIES.map((category) =>
        el("tr", { "data-row": category }, [el("th", { scope: "row", class: "row-name", text: categoryName(category) }), ...cells()]))),
      el("tfoot", {}, el("tr", {}, [el("th", { scope: "row", class: "row-name", text: t("total") }), ...cells()])),
    );
  }
  const advice = game.advice;
  const current = (index) => (index === game.current_player ? "current" : "");
  for (const [index, th] of [...table.tHead.rows[0].cells].slice(1).entries()) setClass(th, current(index));
  for (const row of table.tBodies[0].rows) {
    const category = row.dataset.row;
    setClass(row, advice && game.dice && advice.best_category === category ? "best-row" : "");
    for (const [index, td] of [...row.cells].slice(1).entries()) {
      const sheet = game.sheets[index];
      const filled = category in sheet;
      setClass(td, [filled ? "filled" : "", current(index)].filter(Boolean).join(" "));
      const open = index === game.current_player && game.dice && !filled && category in game.open_scores;
      if (open) renderOption(td, category, game.open_scores[category], advice && advice.best_category === category);
      else if (td.firstElementChild || td.textContent !== (filled ? String(sheet[category]) : "")) {
        td.replaceChildren(filled ? String(sheet[category]) : "");
      }
    }
  }
  for (const [index, td] of [...table.tFoot.rows[0].cells].slice(1).entries()) {
    setClass(td, current(index));
    setText(td, String(game.totals[index]));
  }
  const turnKey = JSON.stringify([shape, game.current_player]);
  if (table.revealed !== turnKey) {
    table.revealed = turnKey;
    revealCurrentColumn();
  }
}

// With more players than fit, the sheet scrolls sideways: the current player's column is brought
// into view at each turn (the names column stays pinned on the left), and a shadow marks hidden ones.
function revealCurrentColumn() {
  const wrap = $("sheet-wrap");
  const current = $("sheet").tHead.querySelector("th.current");
  if (current) {
    const pinned = $("sheet").tHead.rows[0].cells[0].offsetWidth;
    const left = current.offsetLeft - pinned;
    const right = current.offsetLeft + current.offsetWidth - wrap.clientWidth;
    if (wrap.scrollLeft > left) wrap.scrollLeft = left;
    else if (wrap.scrollLeft < right) wrap.scrollLeft = right;
  }
  markHiddenColumns();
}

function markHiddenColumns() {
  const wrap = $("sheet-wrap");
  const frame = $("sheet-frame");
  frame.classList.toggle("more-left", wrap.scrollLeft > 1);
  frame.classList.toggle("more-right", wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1);
}

// A row the current player can take: the button stays the same element while its points change.
function renderOption(td, category, points, isBest) {
  let button = td.firstElementChild;
  if (!button) {
    button = el("button", { type: "button", "data-category": category, onclick: () => openConfirm(category) });
    td.replaceChildren(button);
  }
  setClass(button, "option" + (isBest ? " best" : "") + (points === 0 ? " zero" : ""));
  setAttr(button, "aria-label", categoryName(category) + ": " + t("points", { points }));
  setText(button, String(points));
}

// Dialogs ------------------------------------------------------------------------------------------

function openConfirm(category) {
  const game = currentGame();
  if (!game || !game.dice || !(category in game.open_scores)) return;
  const points = game.open_scores[category];
  page.pendingRecord = category;
  page.dialogBasis = actedOn();
  $("confirm-text").textContent = t("confirm_text", { category: categoryName(category), points, name: game.current_player_name });
  $("confirm-scratch").hidden = points !== 0;
  $("dialog-confirm").showModal();
}

async function confirmRecord() {
  const category = page.pendingRecord;
  $("dialog-confirm").close();
  if (category) await send("/api/record", { category }, page.dialogBasis);
}

function openDiePicker(index) {
  page.pendingDie = index;
  page.dialogBasis = actedOn();
  $("die-title").textContent = t("correct_title", { n: index + 1 });
  const current = currentGame().dice[index];
  $("die-choices").replaceChildren(
    ...[1, 2, 3, 4, 5, 6].map((value) =>
      el("button", {
        type: "button", class: "button face-choice", "data-value": String(value),
        "aria-pressed": String(value === current), "aria-label": String(value),
        onclick: () => correctDie(value),
      }, [dieFace(value)])),
  );
  $("dialog-die").showModal();
}

async function correctDie(value) {
  const index = page.pendingDie;
  $("dialog-die").close();
  const shown = page.dialogBasis.seen && page.dialogBasis.seen.dice;
  if (shown && shown[index] !== value) await send("/api/correct", { die: index, value }, page.dialogBasis);
}

// Entering a roll: one tap opens the keypad, one tap per die fills the next empty place, and the
// fifth saves it (six taps). A throw the camera half read starts filled and waits for Save.
// With dice held, only the thrown ones are entered: the held ones complete the roll.
function openManual() {
  const game = currentGame();
  if (!game || game.rolls_left === 0) return;
  const held = game.dice ? game.held : [];
  page.manualPositions = [0, 1, 2, 3, 4].filter((position) => !held.includes(position));
  const count = page.manualPositions.length;
  let start = unsureThrow();
  if (start && held.length) start = start.filter((value) => value !== null).length === count ? start.slice(0, count) : null;
  page.manualDice = start || Array(count).fill(null);
  page.manualSavesItself = !start;
  page.dialogBasis = actedOn();
  const note = $("manual-held");
  note.hidden = held.length === 0;
  note.textContent = held.length ? t("manual_thrown", { held: held.map((position) => game.dice[position]).join(" ") }) : "";
  renderManual();
  $("dialog-manual").showModal();
}

// After a throw the camera could not read surely (and before the dice move again), the roll to enter
// is that throw: what was read, left to right as the dice lie, the rest left to choose.
function unsureThrow() {
  const camera = page.state.camera;
  if (camera.status !== "unsure" || !camera.reading) return null;
  const values = [...camera.reading.dice].sort((a, b) => a.x - b.x || a.y - b.y).map((die) => die.value);
  if (values.length === 0 || values.length > 5) return null; // more than five: which five is the player's to say
  return [...values, ...Array(5 - values.length).fill(null)];
}

function renderManual() {
  const next = page.manualDice.indexOf(null);
  fill($("manual-slots"), JSON.stringify([page.manualDice, page.language]), () =>
    page.manualDice.map((value, index) => el("button", {
      type: "button",
      class: "die manual-slot" + (value === null ? " empty" : "") + (index === next ? " next" : ""),
      "data-die": String(index),
      "data-value": value === null ? "" : String(value),
      "aria-label": value === null ? t("manual_die", { n: page.manualPositions[index] + 1 })
        : t("manual_slot", { n: page.manualPositions[index] + 1, value }),
      onclick: () => clearManual(index),
    }, dieFace(value))));
  fill($("manual-keys"), page.language, () =>
    [1, 2, 3, 4, 5, 6].map((value) => el("button", {
      type: "button", class: "button face-choice", "data-value": String(value),
      "aria-label": t("manual_value", { value }), onclick: () => enterManual(value),
    }, dieFace(value))));
  $("manual-save").disabled = next !== -1;
}

function enterManual(value) {
  const next = page.manualDice.indexOf(null);
  if (next === -1) return;
  page.manualDice[next] = value;
  renderManual();
  if (page.manualSavesItself && !page.manualDice.includes(null)) saveManual();
}

// A die entered wrong: tapping it empties its place, which the next value fills.
function clearManual(index) {
  page.manualDice[index] = null;
  renderManual();
}

async function saveManual() {
  if (page.manualDice.includes(null)) return;
  $("dialog-manual").close();
  await send("/api/roll", { dice: page.manualDice }, page.dialogBasis);
}

function openCamera() {
  renderCameraDialog();
  showCameraPicture(false);
  $("dialog-camera").showModal();
}

function renderCameraDialog() {
  const camera = page.state ? page.state.camera : null;
  const status = camera ? camera.status : "off";
  setText($("camera-title"), t("cam." + status));
  setText($("camera-detail"), camera ? cameraText(camera) : "");
  $("camera-show-live").hidden = status === "off";
}

// What the camera says: in the player's language where the table gave it as notes, else its own
// words (a camera's errors, which are for whoever mends it, come in English only).
function cameraText(camera) {
  if (!camera.notes || !camera.notes.length) return camera.message || "";
  return camera.notes.map((note) => (note.code === "other" ? note.text : t("note." + note.code, note))).join(" · ");
}

// Which throw a picture is of: the still is fetched once per reading, not once per state change.
function readingKey(camera) {
  return JSON.stringify(camera.reading);
}

function stillUrl() {
  return "/api/camera/still.jpg?v=" + (page.state ? page.state.version : 0);
}

// A throw read while the last one's picture is shown: show the new one, as its words already are.
function followTheThrow() {
  const showingStill = $("camera-show-still").getAttribute("aria-pressed") === "true";
  if (showingStill && readingKey(page.state.camera) !== page.stillReading) showCameraPicture(false);
}

// Dice typed by hand after the camera's last throw are not that throw, and answer what it said of it:
// neither its picture nor its words belong beside them (the table says whether a roll was typed since).
function typedSinceReading(game, camera) {
  return Boolean(camera.typed_after_reading) && game.dice_source !== "camera";
}

// The camera's last throw, small beside the dice, while it is the roll shown or what the camera's
// message is about: a glance shows every die found and read (a tap shows it large).
function renderCameraThumb(game, camera) {
  const thumb = $("camera-thumb");
  const shownKey = readingKey(camera);
  const typedAfter = typedSinceReading(game, camera);
  const isTheRoll = camera.reading_counted && game.dice && game.dice_source !== "manual";
  const isTalkedAbout = camera.status === "unsure" || (camera.notes && camera.notes.length > 0);
  const reading = camera.reading && !typedAfter && (isTheRoll || isTalkedAbout) ? shownKey : null;
  if (reading === page.thumbReading) return;
  page.thumbReading = reading;
  thumb.hidden = true;
  if (reading === null) {
    thumb.removeAttribute("src");
    return;
  }
  thumb.onload = () => (thumb.hidden = false);
  thumb.src = stillUrl();
}

// The live view is an MJPEG stream: it holds a connection until the picture is let go.
function showCameraPicture(live) {
  const still = $("camera-still");
  const none = $("camera-none");
  $("camera-show-still").setAttribute("aria-pressed", String(!live));
  $("camera-show-live").setAttribute("aria-pressed", String(live));
  still.hidden = true;
  none.hidden = true;
  still.onload = () => (still.hidden = false);
  still.onerror = () => (none.hidden = false);
  still.src = live ? "/api/camera.mjpg" : stillUrl();
  page.stillReading = live || !page.state ? null : readingKey(page.state.camera);
}

// End of game and history -------------------------------------------------------------------------

function playerSummaries(game) {
  return game.players.map((name, index) => {
    const isWinner = game.winners.includes(name);
    const sheet = game.sheets[index];
    const costly = game.history
      .filter((turn) => turn.player === index && typeof turn.cost === "number" && turn.cost > COSTLY_THRESHOLD)
      .sort((a, b) => b.cost - a.cost)
      .slice(0, COSTLY_SHOWN);
    const rows = CATEGORIES.map((category) =>
      el("tr", {}, [
        el("th", { scope: "row", text: categoryName(category) }),
        el("td", { text: category in sheet ? String(sheet[category]) : "–" }),
      ]));
    const costlyBlock = game.is_over
      ? [
          el("h4", { text: t("costly_title") }),
          costly.length
            ? el("ul", { class: "costly" }, costly.map((turn) =>
                el("li", { text: t("costly_line", { turn: turn.turn, category: categoryName(turn.category), points: turn.points, cost: oneDecimal(turn.cost) }) })))
            : el("p", { class: "muted", text: t("costly_none") }),
        ]
      : [];
    return el("article", { class: "card summary" + (isWinner ? " winner" : "") }, [
      el("h3", {}, [
        el("span", {}, [isWinner ? el("span", { class: "crown", text: "★ " }) : null, name]),
        el("span", { class: "summary-total", text: String(game.totals[index]) }),
      ]),
      el("table", { class: "summary-sheet" }, [el("tbody", {}, rows)]),
      ...costlyBlock,
    ]);
  });
}

function winnerLine(game) {
  if (!game.is_over) return t("unfinished");
  return game.winners.length > 1 ? t("winners", { names: joinNames(game.winners) }) : t("winner", { names: game.winners[0] });
}

function renderOver() {
  const game = currentGame();
  setText($("winner-line"), winnerLine(game));
  fill($("over-players"), JSON.stringify([game, page.language]), () => playerSummaries(game));
  const past = page.pastGames.find((summary) => summary.id === game.id);
  fill($("over-turns"), JSON.stringify([game, past, page.language]), () => gameTurns(game, past));
}

// Every turn of a game as it was played: each roll (held dice marked), the row taken, the advisor's
// row for the same dice and the expected points the choice cost; the game's date; its files.
function gameTurns(game, past) {
  const when = past ? (past.finished ? t("finished", { date: formatDate(past.finished) }) : t("started", { date: formatDate(past.started) })) : "";
  const rows = game.history.map((turn) => {
    const rolls = (turn.throws || []).map((roll) =>
      el("span", { class: "roll" }, roll.dice.map((value, position) =>
        el("span", { class: "roll-die" + (roll.held.includes(position) ? " held" : ""), text: String(value) }))));
    const same = turn.advised === turn.category;
    return el("tr", { class: !same && turn.cost > COSTLY_THRESHOLD ? "costly-turn" : "" }, [
      el("td", { text: String(turn.turn) }),
      el("td", { text: turn.player_name }),
      el("td", { class: "rolls" }, rolls),
      el("td", { text: `${categoryName(turn.category)} ${turn.points}` }),
      el("td", { text: turn.advised ? (same ? t("advised_same") : `${categoryName(turn.advised)} ${turn.advised_points}`) : "–" }),
      el("td", { class: "number", text: typeof turn.cost === "number" ? formatValue(oneDecimal(turn.cost)) : "–" }),
    ]);
  });
  const exports = ["json", "csv"].map((format) =>
    el("a", { class: "button", href: `/api/games/${game.id}/export.${format}`, download: "", "data-export": format, text: t("export_file", { format: format.toUpperCase() }) }));
  return [
    el("div", { class: "turns-head" }, [el("h3", { text: t("turns_title") }), el("span", { class: "muted", text: when }), ...exports]),
    el("p", { class: "muted small", text: t("turns_held_note") }),
    el("div", { class: "table-scroll" }, el("table", { class: "turns-table" }, [
      el("thead", {}, el("tr", {}, ["col_turn", "col_player", "col_rolls", "col_row", "col_advised", "col_cost"].map((key) =>
        el("th", { scope: "col", text: t(key) })))),
      el("tbody", {}, rows),
    ])),
  ];
}

// Each player's record over the finished games of this table.
function playerStatsTable(players) {
  return [
    el("h3", { text: t("stats_title") }),
    el("div", { class: "table-scroll" }, el("table", { class: "turns-table" }, [
      el("thead", {}, el("tr", {}, ["col_player", "col_games", "col_average", "col_best", "col_yachts", "col_wins"].map((key) =>
        el("th", { scope: "col", text: t(key) })))),
      el("tbody", {}, players.map((player) => el("tr", { "data-player": player.name }, [
        el("td", { text: player.name }),
        el("td", { class: "number", text: String(player.games) }),
        el("td", { class: "number", text: formatValue(oneDecimal(player.average)) }),
        el("td", { class: "number", text: String(player.best) }),
        el("td", { class: "number", text: String(player.yachts) }),
        el("td", { class: "number", text: String(player.wins) }),
      ]))),
    ])),
  ];
}

async function loadPlayerStats() {
  try {
    const { response, body } = await fetchJson("/api/stats");
    if (response.ok && body && Array.isArray(body.players)) {
      page.playerStats = body.players;
      if (screenToShow() === "history") renderHistory();
    }
  } catch (error) {
    showToast(t("err.network"));
  }
}

function viewPastGame(id) {
  navigate("/history?game=" + id);
}

async function renderHistory() {
  const wanted = new URLSearchParams(location.search).get("game");
  $("history-list").hidden = Boolean(wanted);
  $("history-detail").hidden = !wanted;
  $("history-empty").hidden = Boolean(wanted) || page.pastGames.length > 0;
  $("player-stats").hidden = Boolean(wanted) || page.playerStats.length === 0;
  if (!wanted) {
    fill($("player-stats"), JSON.stringify([page.playerStats, page.language]), () => playerStatsTable(page.playerStats));
    const currentId = currentGame() ? currentGame().id : null;
    fill($("history-list"), JSON.stringify([page.pastGames, currentId, page.language]), () =>
      page.pastGames.map((past) => gameListItem(past, past.id !== currentId)));
    return;
  }
  if (!page.historyGame || String(page.historyGame.id) !== wanted) {
    const { response, body } = await fetchJson("/api/games/" + encodeURIComponent(wanted)).catch(() => ({ response: { ok: false } }));
    if (!response.ok || !body || !body.game) {
      showToast(t("err.network"));
      return;
    }
    page.historyGame = body.game;
  }
  const game = page.historyGame;
  setText($("history-detail-title"), winnerLine(game));
  fill($("history-detail-players"), JSON.stringify([game, page.language]), () => playerSummaries(game));
  const past = page.pastGames.find((summary) => String(summary.id) === wanted);
  fill($("history-detail-turns"), JSON.stringify([game, past, page.language]), () => gameTurns(game, past));
}

function navigate(path) {
  if (location.pathname + location.search !== path) history.pushState(null, "", path);
  if (location.pathname === "/history") {
    loadPastGames();
    loadPlayerStats();
  }
  render();
  window.scrollTo(0, 0);
}

// --- the screen stays on during a game ----------------------------------------------------------

// A tablet lying on the table between turns must not go dark mid-game: a screen wake lock is held
// while a game is on screen and the page is visible, and let go when the game ends or the page is
// hidden (the browser drops it then anyway; it is taken again on return).
async function keepAwake(wanted) {
  page.wakeWanted = wanted;
  if (!navigator.wakeLock || page.wakeChanging) return;
  page.wakeChanging = true;
  try {
    for (;;) {
      const want = page.wakeWanted && document.visibilityState === "visible";
      if (want === (page.wakeLock !== null)) break;
      if (want) {
        const lock = await navigator.wakeLock.request("screen");
        lock.addEventListener("release", () => page.wakeLock === lock && (page.wakeLock = null));
        page.wakeLock = lock;
      } else {
        const lock = page.wakeLock;
        page.wakeLock = null;
        await lock.release();
      }
    }
  } catch (error) {
    console.warn("the screen may dim: no wake lock", error); // refused (battery saver, policy)
  } finally {
    page.wakeChanging = false;
  }
}

// --- a Yacht is celebrated ------------------------------------------------------------------------

// Only a Yacht the player can still score: with the Yacht row filled, five alike is just dice.
function celebrateYacht(previous, state) {
  const game = state.game;
  if (!game || !game.dice || new Set(game.dice).size !== 1 || game.open_scores.yacht !== 50) return;
  const key = [game.id, game.history.length, game.roll_number, game.dice[0]].join(":");
  const before = previous && previous.game;
  const alreadyShown = before && before.id === game.id && before.dice && before.dice.join() === game.dice.join();
  if (page.celebrated === key || alreadyShown) return;
  page.celebrated = key;
  const banner = $("yacht-banner");
  banner.hidden = false;
  banner.classList.remove("go");
  void banner.offsetWidth; // restart the animation
  banner.classList.add("go");
  clearTimeout(banner.timer);
  banner.timer = setTimeout(() => (banner.hidden = true), 2600);
}

// --- wiring ---------------------------------------------------------------------------------------

function wire() {
  $("undo-button").addEventListener("click", () => send("/api/undo", {}));
  $("history-button").addEventListener("click", () => {
    page.historyGame = null;
    navigate("/history");
  });
  $("new-game-button").addEventListener("click", openStart);
  $("menu-button").addEventListener("click", openMenu);
  $("menu-new-game").addEventListener("click", () => {
    $("dialog-menu").close();
    openStart();
  });
  $("menu-history").addEventListener("click", () => {
    $("dialog-menu").close();
    page.historyGame = null;
    navigate("/history");
  });
  DEVICE_DARK.addEventListener("change", applyTheme);
  $("sheet-wrap").addEventListener("scroll", markHiddenColumns, { passive: true });
  window.addEventListener("resize", () => screenToShow() === "game" && revealCurrentColumn());
  $("over-new-game").addEventListener("click", openStart);
  $("history-back").addEventListener("click", () => {
    if (new URLSearchParams(location.search).get("game")) navigate("/history");
    else navigate("/");
  });
  $("add-player").addEventListener("click", () => {
    if (page.startPlayers.length < MAX_PLAYERS) page.startPlayers.push("");
    renderPlayerList();
    const inputs = $("player-list").querySelectorAll("input");
    inputs[inputs.length - 1].focus();
  });
  $("start-game").addEventListener("click", () => startGame(page.startPlayers));
  $("back-to-game").addEventListener("click", () => {
    page.startOpen = false;
    page.startPlayers = null;
    render();
  });
  $("same-players").addEventListener("click", () => startGame(currentGame().players));
  $("manual-roll").addEventListener("click", openManual);
  $("throw-button").addEventListener("click", () => send("/api/throw", {}));
  $("manual-save").addEventListener("click", saveManual);
  $("keep-these").addEventListener("click", () => {
    const advice = currentGame() && currentGame().advice;
    if (advice && advice.best_keep_positions) askToHold([...advice.best_keep_positions].sort((a, b) => a - b));
  });
  const dismissQuestion = () => (page.dismissedQuestion = $("dialog-kept").dataset.question);
  $("dialog-kept").addEventListener("cancel", dismissQuestion);
  $("kept-not-now").addEventListener("click", dismissQuestion);
  $("confirm-record").addEventListener("click", confirmRecord);
  $("camera-button").addEventListener("click", openCamera);
  $("camera-pill").addEventListener("click", openCamera);
  $("camera-show-still").addEventListener("click", () => showCameraPicture(false));
  $("camera-show-live").addEventListener("click", () => showCameraPicture(true));
  $("dialog-camera").addEventListener("close", () => $("camera-still").removeAttribute("src"));
  $("pin-cancel").addEventListener("click", () => $("dialog-pin").close("cancel"));
  window.addEventListener("popstate", () => {
    if (location.pathname === "/history") {
      loadPastGames();
      loadPlayerStats();
    }
    render();
  });
  window.addEventListener("online", watchdog);
  document.addEventListener("visibilitychange", () => {
    keepAwake(page.wakeWanted);
    if (document.visibilityState === "visible") watchdog();
  });
  setInterval(watchdog, WATCHDOG_MS);
}

function trackTopbarHeight() {
  const bar = document.querySelector(".topbar");
  const update = () => document.documentElement.style.setProperty("--topbar-height", bar.offsetHeight + "px");
  new ResizeObserver(update).observe(bar);
  update();
}

applyTheme();
wire();
trackTopbarHeight();
render();
refreshState().catch(() => setConnected(false));
connectEvents();
if (location.pathname === "/history") {
  loadPastGames();
  loadPlayerStats();
}
