window.dataLayer.push(["config", "UA-NOT-CONTENT"]);
