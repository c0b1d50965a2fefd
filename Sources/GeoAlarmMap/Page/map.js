// geoalarm map: the reminders, where you are and what happened, drawn with Leaflet.
// Everything shown comes from the server in two parts: the reminders' shapes (GET
// /api/reminders) and where things stand (GET /api/state). The live feed (/api/live) says the
// version of each part whenever one changes, and the page fetches only what moved. Every request
// for data carries the token in a header; the token comes from the address's "#token=" part
// (or a one-time "#code=" exchanged for it), which the browser never sends, and is kept for this
// tab only.
"use strict";

(function () {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
  const tiles = meta("geoalarm-tiles");
  const attribution = meta("geoalarm-attribution");

  const map = L.map("map", { zoomControl: true });
  if (tiles) {
    // Leaflet takes the credit as HTML: the config's text is shown as text.
    const credit = document.createElement("span");
    credit.textContent = attribution;
    L.tileLayer(tiles, { maxZoom: 19, attribution: credit.innerHTML }).addTo(map);
  }
  map.setView([0, 0], 2);

  const reminderLayer = L.layerGroup().addTo(map);
  const placeLayer = L.layerGroup().addTo(map);
  const historyLayer = L.layerGroup().addTo(map);
  const positionLayer = L.layerGroup().addTo(map);
  const draftLayer = L.layerGroup().addTo(map);

  const status = document.getElementById("status");
  const message = document.getElementById("message");
  const reminderList = document.getElementById("reminders");
  const historyList = document.getElementById("history");
  const more = document.getElementById("more");

  let snapshot = null;
  /** The Snooze button's length, as `[output] snooze` sets it, and its label: taken with the
   * reminders, before anything is drawn. */
  let snooze = null;
  let fitted = false;
  let live = false;
  // A drag in progress: the snapshot that comes meanwhile is drawn once it ends.
  let dragging = false;

  /**
   * Text for a tooltip, as text: Leaflet takes a string as HTML, and titles come from files
   * (a collection from a city's open data) that the page must not let write its markup.
   */
  function asText(text) {
    const span = document.createElement("span");
    span.textContent = shown(text);
    return span;
  }

  /**
   * Text from files as the event lines show it: control characters, line and paragraph
   * separators and bidirectional controls written as visible escapes (`\u{202E}`), so that no
   * title reorders what follows it ("Invoice \u202Eexe.fdp" is not shown as "Invoice pdf.exe").
   */
  function shown(text) {
    return String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (scalar) => {
      if (scalar === "\n") return "\\n";
      if (scalar === "\t") return "\\t";
      if (scalar === "\r") return "\\r";
      return `\\u{${scalar.codePointAt(0).toString(16).toUpperCase()}}`;
    });
  }

  /** Shows a refusal, a failure or a warning until the next change succeeds. */
  function say(text) {
    message.textContent = text;
    message.hidden = !text;
  }

  /** The token: from the address (then taken out of it, and out of the history), else the one
   * this tab kept; a one-time code is exchanged for it first. */
  let token = sessionStorage.getItem("geoalarm-token") || "";
  async function takeToken() {
    const given = new URLSearchParams(location.hash.slice(1));
    if (location.hash) history.replaceState(null, "", location.pathname);
    if (given.get("token")) token = given.get("token");
    if (given.get("code")) {
      const response = await fetch("/api/session", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: given.get("code") }),
      });
      const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
      if (!response.ok) throw new Error(answer.error);
      token = answer.token;
    }
    if (!token) throw new Error("open the address geoalarm map printed: it holds the map's token");
    sessionStorage.setItem("geoalarm-token", token);
  }

  /** GETs a part of the data; rejects with the server's words. */
  async function get(path) {
    const response = await fetch(path, { headers: { "X-GeoAlarm-Token": token }, cache: "no-store" });
    if (!response.ok) throw new Error((await response.text()).trim() || `${response.status} ${response.statusText}`);
    return response.text();
  }

  /** POSTs a change; resolves to the server's JSON, or shows its message and rejects. */
  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-GeoAlarm-Token": token },
      body: JSON.stringify(body),
    });
    const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
    if (!response.ok) {
      say(answer.error || `${response.status} ${response.statusText}`);
      throw new Error(answer.error);
    }
    say("");
    return answer;
  }

  /** The state class of a reminder: what silences it first, else its side. */
  function stateOf(reminder) {
    if (!reminder.enabled) return "disabled";
    if (reminder.completed) return "completed";
    if (reminder.snoozed_until) return "snoozed";
    if (reminder.out_of_hours) return "out-of-hours";
    if (reminder.starts) return "not-started";
    return reminder.state;
  }

  const stateNames = {
    inside: "inside", outside: "outside", unknown: "unknown", completed: "completed",
    snoozed: "snoozed", "out-of-hours": "out of hours", disabled: "disabled", "not-started": "not started",
  };

  /** What a reminder's badge says: its state's name; when it starts, for one not started. */
  function stateText(reminder, state) {
    return state === "not-started" ? `starts ${reminder.starts}` : stateNames[state] || state;
  }

  /** Metres between two points (haversine). */
  function metres(a, b) {
    const rad = Math.PI / 180;
    const dLat = (b.lat - a.lat) * rad;
    const dLon = (b.lng - a.lng) * rad;
    const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
    return 2 * 6371008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
  }

  /** The point `radius` metres east of `center`: where a circle's radius handle sits. */
  function eastOf(center, radius) {
    const dLon = (radius / (6371008.8 * Math.cos((center.lat * Math.PI) / 180))) * (180 / Math.PI);
    return L.latLng(center.lat, center.lng + dLon);
  }

  const handleIcon = (kind) => L.divIcon({ className: `handle handle-${kind}`, iconSize: [14, 14] });

  /** A circle whose centre and radius can be dragged; `moved` and `resized` hear the result. */
  function draggableCircle(layer, circle, id, moved, resized) {
    const centre = L.marker(circle.getLatLng(), { draggable: true, icon: handleIcon("centre"), title: "Drag to move" }).addTo(layer);
    const edge = L.marker(eastOf(circle.getLatLng(), circle.getRadius()), {
      draggable: true, icon: handleIcon("edge"), title: "Drag to change the radius",
    }).addTo(layer);
    centre.getElement().dataset.id = id;
    edge.getElement().dataset.id = id;
    centre.on("dragstart", () => { dragging = true; });
    centre.on("drag", () => {
      circle.setLatLng(centre.getLatLng());
      edge.setLatLng(eastOf(centre.getLatLng(), circle.getRadius()));
    });
    centre.on("dragend", () => { dragging = false; moved(centre.getLatLng()); });
    edge.on("dragstart", () => { dragging = true; });
    edge.on("drag", () => circle.setRadius(Math.max(1, metres(circle.getLatLng(), edge.getLatLng()))));
    edge.on("dragend", () => {
      dragging = false;
      edge.setLatLng(eastOf(circle.getLatLng(), circle.getRadius()));
      resized(Math.round(circle.getRadius()));
    });
    return { centre, edge };
  }

  /** Marks a Leaflet path's element for the stylesheet and for tests. */
  function tag(layer, id, kind) {
    const element = layer.getElement && layer.getElement();
    if (element) {
      element.dataset.id = id;
      element.dataset.kind = kind;
    }
  }

  // A click on a shape is the shape's, not the map's (which would propose a new reminder).
  function shapeOf(reminder, className) {
    if (reminder.shape === "circle") {
      return L.circle(reminder.center, { radius: reminder.radius, className, bubblingMouseEvents: false });
    }
    return L.polygon(reminder.polygons, { className, bubblingMouseEvents: false });
  }

  /** Puts a refused drag back where the server has the reminder. */
  function redrawAfterFailure() {
    drawnReminders = "";
    if (snapshot) draw(snapshot);
  }

  function drawReminder(reminder) {
    const state = stateOf(reminder);
    const shape = shapeOf(reminder, `reminder state-${state}`).addTo(reminderLayer);
    tag(shape, reminder.id, "reminder");
    // Its name to the left: the radius handle sits on the right edge.
    shape.bindTooltip(asText(reminder.title), { permanent: true, direction: "left", className: "label", offset: [-10, 0] });
    // A task's place is changed in its task app.
    if (reminder.shape === "circle" && !reminder.list) {
      draggableCircle(
        reminderLayer, shape, reminder.id,
        (point) => post("/api/change", { id: reminder.id, lat: point.lat, lon: point.lng }).catch(redrawAfterFailure),
        (radius) => post("/api/change", { id: reminder.id, radius: `${radius}m` }).catch(redrawAfterFailure),
      );
    }
  }

  /** The panel's entry for a reminder: its state, and its buttons. */
  function listEntry(reminder) {
    const item = document.createElement("li");
    item.dataset.id = reminder.id;
    const state = stateOf(reminder);
    const title = document.createElement("button");
    title.className = "title";
    title.textContent = shown(reminder.title);
    title.addEventListener("click", () => {
      if (reminder.shape === "circle") map.setView(reminder.center, Math.max(map.getZoom(), 16));
      else map.fitBounds(L.polygon(reminder.polygons).getBounds());
    });
    const badge = document.createElement("span");
    badge.className = `badge state-${state}`;
    badge.textContent = stateText(reminder, state);
    item.append(title, " ", badge);
    if (reminder.list) {
      const list = document.createElement("span");
      list.className = "list";
      list.textContent = `in ${shown(reminder.list)}`;
      item.append(" ", list);
    }
    const proximity = proximityText(reminder);
    if (proximity) {
      const line = document.createElement("span");
      line.className = "proximity";
      line.textContent = proximity;
      item.append(" ", line);
    }

    const actions = document.createElement("div");
    actions.className = "actions";
    const button = (label, action) => {
      const element = document.createElement("button");
      element.textContent = label;
      element.addEventListener("click", action);
      actions.append(element);
      return element;
    };
    if (!reminder.list) button("Edit", () => item.append(editForm(reminder, item)));
    // A task's buttons name it by its key too: they act on the task shown, whatever came since.
    const target = { id: reminder.id, key: reminder.key };
    if (reminder.completed) button("Uncomplete", () => post("/api/uncomplete", target).catch(() => {}));
    else button("Complete", () => post("/api/complete", target).catch(() => {}));
    if (reminder.snoozed_until) button("Unsnooze", () => post("/api/snooze", { ...target, seconds: 0 }).catch(() => {}));
    else button(snooze.label, () => post("/api/snooze", { ...target, seconds: snooze.seconds }).catch(() => {}));
    button("Remove", () => {
      if (confirm(`Remove "${shown(reminder.title)}" from the config?`)) post("/api/remove", { id: reminder.id }).catch(() => {});
    });
    item.append(actions);
    return item;
  }

  /** "towards, 6.2 km, about 9 min": where you head, as the agent noted it; "" when unknown or there. */
  function proximityText(reminder) {
    if (!reminder.direction || reminder.direction === "unknown" || reminder.direction === "arrived") return "";
    const metres = reminder.edge_m ?? 0;
    const distance = metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(metres < 10000 ? 1 : 0)} km`;
    const words = [reminder.direction.replace("_", " "), distance];
    if (reminder.eta_s != null) words.push(`about ${Math.max(1, Math.round(reminder.eta_s / 60))} min`);
    return words.join(", ");
  }

  /** A form to change a reminder's title and radius. */
  function editForm(reminder, item) {
    item.querySelector("form.edit")?.remove();
    const form = document.createElement("form");
    form.className = "edit";
    const title = labelled(form, "Title", "text", reminder.title);
    const radius = reminder.shape === "circle" ? labelled(form, "Radius", "text", `${Math.round(reminder.radius)}m`) : null;
    const save = document.createElement("button");
    save.type = "submit";
    save.textContent = "Save";
    form.append(save);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const change = { id: reminder.id };
      if (title.value !== reminder.title) change.title = title.value;
      if (radius && radius.value !== `${Math.round(reminder.radius)}m`) change.radius = radius.value;
      post("/api/change", change).then(() => form.remove(), () => {});
    });
    return form;
  }

  function labelled(form, text, type, value) {
    const label = document.createElement("label");
    label.textContent = `${text} `;
    const input = document.createElement("input");
    input.type = type;
    input.value = value;
    input.name = text.toLowerCase();
    label.append(input);
    form.append(label);
    return input;
  }

  /** Where you are: the last fix the agent used, with its error circle. */
  function drawPosition(position) {
    positionLayer.clearLayers();
    if (!position) return;
    const point = [position.lat, position.lon];
    if (position.error) L.circle(point, { radius: position.error, className: "position-error", interactive: false }).addTo(positionLayer);
    const dot = L.circleMarker(point, { radius: 7, className: "position", bubblingMouseEvents: false }).addTo(positionLayer);
    const element = dot.getElement();
    element.dataset.lat = position.lat;
    element.dataset.lon = position.lon;
    dot.bindTooltip(asText(`You, at ${position.time ? new Date(position.time).toLocaleTimeString() : "an unknown time"}`));
  }

  /** The recent events, newest first: each an object of the event log's JSON lines
   * (`geoalarm history --json`). */
  function drawHistory(events) {
    historyLayer.clearLayers();
    historyList.replaceChildren();
    for (const entry of events.slice().reverse()) {
      const item = document.createElement("li");
      item.className = `event-${entry.event}`;
      const time = entry.time ? new Date(entry.time) : null;
      item.textContent = `${time ? time.toLocaleString() : "?"}: ${entry.event} ${shown(entry.title)}`;
      if (entry.lat !== null && entry.lon !== null) {
        const marker = L.circleMarker([entry.lat, entry.lon], { radius: 4, className: `event event-${entry.event}`, bubblingMouseEvents: false }).addTo(historyLayer);
        marker.bindTooltip(asText(item.textContent));
        item.addEventListener("click", () => map.setView([entry.lat, entry.lon], Math.max(map.getZoom(), 16)));
      }
      historyList.append(item);
    }
  }

  /** The reminders and collections drawn last (and the Snooze button's length their entries
   * name): redrawn only when they change, so that a new position every few seconds does not
   * close a form being filled in. */
  let drawnReminders = "";

  function draw(data) {
    snapshot = data;
    const reminders = JSON.stringify([data.reminders, data.collections, snooze]);
    if (reminders !== drawnReminders) {
      drawnReminders = reminders;
      reminderLayer.clearLayers();
      reminderList.replaceChildren();
      for (const reminder of data.reminders) {
        drawReminder(reminder);
        reminderList.append(listEntry(reminder));
      }
      for (const collection of data.collections) {
        const item = document.createElement("li");
        item.textContent = `${shown(collection.title)} (a collection of ${collection.places} ${collection.places === 1 ? "place" : "places"})`;
        reminderList.append(item);
      }
      loadPlaces();
    }
    drawPosition(data.position);
    drawHistory(data.history);
    if (!fitted) {
      fitted = true;
      const bounds = L.latLngBounds([]);
      for (const reminder of data.reminders) bounds.extend(boundsOf(reminder));
      if (data.position) bounds.extend([data.position.lat, data.position.lon]);
      if (bounds.isValid()) map.fitBounds(bounds.pad(0.1), { maxZoom: 17 });
    }
    showStatus();
  }

  function boundsOf(reminder) {
    if (reminder.shape === "circle") return L.latLng(reminder.center).toBounds(reminder.radius * 2);
    return L.polygon(reminder.polygons).getBounds();
  }

  function showStatus() {
    const where = snapshot && snapshot.position
      ? `last fix ${snapshot.position.time ? new Date(snapshot.position.time).toLocaleTimeString() : "at an unknown time"}`
      : "no fix recorded yet";
    status.textContent = `${live ? "Live" : "Reconnecting…"}: ${where}`;
    status.dataset.live = live;
  }

  /** Collection places in view, asked for by the view's box: capped, with a note beyond the cap. */
  let placesAsked = 0;
  async function loadPlaces() {
    if (!snapshot || snapshot.collections.length === 0) {
      placeLayer.clearLayers();
      more.hidden = true;
      return;
    }
    const view = map.getBounds();
    const asked = ++placesAsked;
    const query = new URLSearchParams({
      south: view.getSouth(), west: view.getWest(), north: view.getNorth(), east: view.getEast(), limit: 500,
    });
    const answer = JSON.parse(await get(`/api/places?${query}`).catch(() => "null"));
    if (!answer || asked !== placesAsked) return;
    placeLayer.clearLayers();
    for (const place of answer.places) {
      const shape = shapeOf(place, `place state-${stateOf(place)}`).addTo(placeLayer);
      tag(shape, place.id, "place");
      shape.bindTooltip(asText(place.title));
    }
    more.hidden = answer.complete;
  }
  map.on("moveend", loadPlaces);

  /** A click on the map proposes a reminder there: a circle to size, a title, when. */
  map.on("click", (event) => {
    draftLayer.clearLayers();
    const circle = L.circle(event.latlng, { radius: 50, className: "draft", bubblingMouseEvents: false }).addTo(draftLayer);
    const form = document.createElement("form");
    form.className = "add";
    const title = labelled(form, "Title", "text", "");
    const radius = labelled(form, "Radius", "text", "50m");
    const whenLabel = document.createElement("label");
    whenLabel.textContent = "When ";
    const when = document.createElement("select");
    when.name = "when";
    for (const value of ["arrive", "leave", "both"]) when.append(new Option(value, value));
    whenLabel.append(when);
    form.append(whenLabel);
    // Where it is kept: the config, or one of the task lists (a task there, for every device that syncs it).
    let list = null;
    if (snapshot && snapshot.lists.length > 0) {
      const listLabel = document.createElement("label");
      listLabel.textContent = "In ";
      list = document.createElement("select");
      list.name = "list";
      list.append(new Option("the config", ""));
      for (const name of snapshot.lists) list.append(new Option(name, name));
      listLabel.append(list);
      form.append(listLabel);
    }
    const add = document.createElement("button");
    add.type = "submit";
    add.textContent = "Add";
    form.append(add);
    const popup = L.popup({ closeOnClick: false }).setLatLng(event.latlng).setContent(form).openOn(map);
    const handles = draggableCircle(draftLayer, circle, "new", () => popup.setLatLng(circle.getLatLng()), (metresAcross) => {
      radius.value = `${metresAcross}m`;
    });
    radius.addEventListener("input", () => {
      const typed = parseFloat(radius.value);
      if (typed > 0) {
        const scale = /km$/.test(radius.value.trim()) ? 1000 : 1;
        circle.setRadius(typed * scale);
        handles.edge.setLatLng(eastOf(circle.getLatLng(), circle.getRadius()));
      }
    });
    popup.on("remove", () => draftLayer.clearLayers());
    form.addEventListener("submit", (submitted) => {
      submitted.preventDefault();
      const point = circle.getLatLng();
      const change = { title: title.value, lat: point.lat, lon: point.lng, radius: radius.value, when: when.value };
      if (list && list.value) change.list = list.value;
      post("/api/add", change)
        .then((answer) => {
          map.closePopup(popup);
          if (answer.warning) say(answer.warning);
        }, () => {});
    });
    title.focus();
  });

  /** The parts as fetched last, with their versions. */
  const parts = { reminders: null, state: null };

  /** Fetches each part whose version moved past the one held, then draws them together. */
  async function refresh(versions) {
    for (const name of ["reminders", "state"]) {
      if (parts[name] && parts[name].version >= versions[name]) continue;
      const part = JSON.parse(await get(`/api/${name}`));
      if (!parts[name] || part.version > parts[name].version) parts[name] = part;
    }
    snooze = { seconds: parts.reminders.snooze, label: parts.reminders.snooze_label };
    const data = {
      config: parts.reminders.config,
      collections: parts.reminders.collections,
      lists: parts.reminders.lists,
      reminders: parts.reminders.reminders.map((reminder) => ({ ...reminder, ...parts.state.reminders[reminder.id] })),
      position: parts.state.position,
      history: parts.state.history,
    };
    if (dragging) {
      snapshot = data;
      return;
    }
    draw(data);
  }

  /** The live feed: the parts' versions now and at every change, as server-sent events read
   * through fetch (which can send the token's header); connected again after a loss. */
  async function follow() {
    for (;;) {
      try {
        const response = await fetch("/api/live", { headers: { "X-GeoAlarm-Token": token }, cache: "no-store" });
        if (response.status === 403 || response.status === 421) {
          // The map was restarted, with a new token: only its new address opens it.
          live = false;
          showStatus();
          say("This map has stopped or was restarted: open the address geoalarm map printed.");
          return;
        }
        if (!response.ok) throw new Error(`${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        let first = true;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end).split("\n").filter((line) => line.startsWith("data: "))
              .map((line) => line.slice(6)).join("\n");
            buffer = buffer.slice(end + 2);
            await refresh(JSON.parse(event));
            if (first) {
              first = false;
              live = true;
              showStatus();
            }
          }
        }
      } catch (error) {
        console.debug("live feed lost:", error);
      }
      live = false;
      showStatus();
      await new Promise((done) => setTimeout(done, 2000));
    }
  }

  window.geoalarm = { map };
  takeToken().then(follow, (error) => {
    status.textContent = "Not connected";
    say(error.message);
  });
})();
