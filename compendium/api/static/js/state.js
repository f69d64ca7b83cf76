// The knowledge bases the signed-in key sees, shared by the shell (app.js) and the views.

let knowledgeBases = [];
let reload = async () => {};

// app.js hands over how to load the list (it also refreshes the picker in the header).
export function installKnowledgeBaseLoader(load) {
  reload = load;
}

export function knownKnowledgeBases() {
  return knowledgeBases;
}

export function setKnowledgeBases(list) {
  knowledgeBases = list;
}

export async function refreshKnowledgeBases() {
  await reload();
}
